// Node.js workload with worker threads: the main thread runs mainSpin, two workers run
// workerSpin, each in its own isolate, so that each thread's samples show its own
// JavaScript stack. Runs for argv[2] seconds (default: forever); with argv[3], the main
// thread starts a third worker, running lateSpin, argv[3] seconds after its start (from
// inside its busy loop, which never returns to the event loop).
'use strict';
const { Worker, isMainThread, workerData } = require('worker_threads');

function spin(n) {
  let x = 0;
  for (let i = 0; i < n; i++) x = (x + i * 3) & 0xffff;
  return x;
}

// the functions a thread's samples are in (spin inlined into them): each called again
// and again, so that V8 optimizes it as a whole (not only its loop, by on-stack
// replacement, which a perf map written from an attach does not name)
function workerSpin(n) {
  let s = 0;
  for (let k = 0; k < n; k++) s += spin(20000);
  return s;
}

function lateSpin(n) {
  let s = 0;
  for (let k = 0; k < n; k++) s += spin(20000);
  return s;
}

function mainSpin(n) {
  let s = 0;
  for (let k = 0; k < n; k++) s += spin(20000);
  return s;
}

function run(fn, end, lateAt) {
  let s = 0;
  while (Date.now() < end) {
    s += fn(20);
    if (Date.now() >= lateAt) {
      lateAt = Infinity;
      new Worker(__filename, { workerData: { end, late: true } });
    }
  }
  return s;
}

if (isMainThread) {
  const end = Date.now() + 1000 * Number(process.argv[2] || 1e9);
  const lateAt = process.argv[3] ? Date.now() + 1000 * Number(process.argv[3]) : Infinity;
  for (let i = 0; i < 2; i++) new Worker(__filename, { workerData: { end } });
  process.stdout.write('ready\n');
  run(mainSpin, end, lateAt);
} else {
  run(workerData.late ? lateSpin : workerSpin, workerData.end, Infinity);
}
