// Node.js processes that change under the reader, for tests/e2e/node_faults.sh:
//   node node_faults.js short MS      spins in hotA/hotB for MS ms of wall time, exits
//   node node_faults.js fork SECONDS  forks (child_process.fork) a short child every
//                                     100 ms for SECONDS, spinning itself meanwhile
//   node --expose-gc --stress-compaction node_faults.js gc SECONDS
//                                     allocates hard (retained arrays and strings,
//                                     dropped in bulk) and runs full GCs, which move
//                                     objects, every few ms
// Every JavaScript function here is named; the test checks that each _[js] frame kiln
// writes is one of them or one of node's or V8's own (a node: file, v8/gc).
'use strict';
const { fork } = require('child_process');

function hotA(n) {
  let x = 0;
  for (let i = 0; i < n; i++) x = (x + i * 7) & 0xffffff;
  return x;
}

function hotB(n) {
  let x = 1;
  for (let i = 0; i < n; i++) x = (x * 3 + i) & 0xffffff;
  return x;
}

function spinFor(ms) {
  const end = Date.now() + ms;
  let s = 0;
  while (Date.now() < end) s += hotA(5000) + hotB(3000);
  return s;
}

function makeGarbage(keep) {
  const objs = [];
  for (let i = 0; i < 2000; i++) objs.push({ i, s: 'k' + i, a: [i, i + 1, i + 2] });
  keep.push(objs);
  if (keep.length > 100) keep.splice(0, 75);	// most of the old generation dies at once
  return objs.length;
}

function churn(seconds) {
  const end = Date.now() + 1000 * seconds;
  const keep = [];
  let s = 0;
  for (let round = 1; Date.now() < end; round++) {
    s += makeGarbage(keep) + hotA(2000);
    // with --expose-gc (and --stress-compaction: every full GC moves objects), a full
    // GC every 10 rounds: many while a sample is read
    if (typeof gc === 'function' && round % 10 === 0) gc();
  }
  return s;
}

function forkLoop(seconds) {
  const end = Date.now() + 1000 * seconds;
  function next() {
    if (Date.now() >= end) return;
    // the child runs the command this one was started with (its name is the test's)
    const child = fork(__filename, ['short', '150'], { stdio: 'ignore', execPath: process.argv0 });
    child.on('exit', () => {});
    spinFor(100);
    setImmediate(next);
  }
  next();
}

const mode = process.argv[2];
const arg = Number(process.argv[3] || 1);
if (mode === 'short') spinFor(arg);
else if (mode === 'fork') forkLoop(arg);
else if (mode === 'gc') churn(arg);
else throw new Error(`unknown mode '${mode}'`);
