// bench/node_attach.sh's probe of libkiln-nodeperf.so inside node: loads a few of node's
// own modules and warms a hot function (so that there is code to enumerate), then times
// start(0) — the main thread's pause while V8 enumerates the existing code into the map —
// and stop(). Prints "start_ms stop_ms lines". Usage: node node_attach_pause.js LIB
'use strict';
const m = { exports: {} };
process.dlopen(m, process.argv[2]);
for (const x of ['http', 'https', 'zlib', 'crypto', 'stream', 'url', 'util', 'net', 'dns', 'tls']) require(x);
function hot(n) { let x = 0; for (let i = 0; i < n; i++) x = (x + i * 7) & 0xffffff; return x; }
let s = 0;
for (let i = 0; i < 2000; i++) s += hot(10000);
const t0 = process.hrtime.bigint();
const r = m.exports.start(0);
const t1 = process.hrtime.bigint();
const lines = m.exports.stop();
const t2 = process.hrtime.bigint();
require('fs').unlinkSync(`/tmp/perf-${process.pid}.map`);
if (r !== 'ok') throw new Error(r);
console.log(`${Number(t1 - t0) / 1e6} ${Number(t2 - t1) / 1e6} ${lines} ${s & 1}`);
