// bench/node.sh: a pprof file (gzipped or not, or the file part "profile" of a multipart
// form, as @pyroscope/nodejs before 0.6 uploads it) -> collapsed stacks, "root;...;leaf N" per
// line, N the sample's first value (the sample count), frames "name (file:line)".
// Usage: node pprof_collapse.js FILE (pprof-format from NODE_PATH: the Pyroscope SDK's).
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const { Profile } = require('pprof-format');

let buf = fs.readFileSync(process.argv[2]);
const part = buf.indexOf('name="profile"');
if (buf[0] === 0x2d && part >= 0) {	// "--boundary\r\n...headers...\r\n\r\nBYTES\r\n--boundary"
  const boundary = buf.subarray(0, buf.indexOf('\r\n'));
  const start = buf.indexOf('\r\n\r\n', part) + 4;
  buf = buf.subarray(start, buf.indexOf(Buffer.concat([Buffer.from('\r\n'), boundary]), start));
}
if (buf[0] === 0x1f && buf[1] === 0x8b) buf = zlib.gunzipSync(buf);
const p = Profile.decode(buf);
const str = (i) => p.stringTable.strings[Number(i)] || '';
const fns = new Map(p.function.map((f) => [String(f.id), f]));
const locs = new Map(p.location.map((l) => [String(l.id), l]));
const out = new Map();
for (const s of p.sample) {
  const frames = [];
  for (const id of s.locationId) {	// leaf first
    const l = locs.get(String(id));
    for (const line of (l ? l.line : []).slice().reverse()) {	// inlined: innermost first
      const f = fns.get(String(line.functionId));
      frames.push(f ? `${str(f.name) || '(anonymous)'} (${str(f.filename)}:${line.line})` : '?');
    }
  }
  const key = frames.reverse().join(';') || '(none)';
  out.set(key, (out.get(key) || 0) + Number(s.value[0]));
}
for (const [k, n] of out) if (n > 0) process.stdout.write(`${k} ${n}\n`);
