// Node.js workload whose JavaScript calls native code: compress() spends its time in
// zlib.deflateSync, C++ (node's zlib binding and zlib's deflate) called from JavaScript,
// so that its samples show native frames above the JavaScript caller. Runs for argv[2]
// seconds (default: forever).
'use strict';
const zlib = require('zlib');

const data = Buffer.alloc(1 << 20);
for (let i = 0; i < data.length; i++) data[i] = (i * 7919) % 251;

function compress() {
  return zlib.deflateSync(data, { level: 9 }).length;
}

const end = Date.now() + 1000 * Number(process.argv[2] || 1e9);
process.stdout.write('ready\n');
let s = 0;
while (Date.now() < end) s += compress();
