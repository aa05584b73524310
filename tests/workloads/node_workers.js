// Node.js workload with worker threads: the main thread runs mainSpin, two workers run
// workerSpin, each in its own isolate, so that each thread's samples show its own
// JavaScript stack. Runs for argv[2] seconds (default: forever).
'use strict';
const { Worker, isMainThread, workerData } = require('worker_threads');

function spin(n) {
  let x = 0;
  for (let i = 0; i < n; i++) x = (x + i * 3) & 0xffff;
  return x;
}

function workerSpin(end) {
  let s = 0;
  while (Date.now() < end) s += spin(100000);
  return s;
}

function mainSpin(end) {
  let s = 0;
  while (Date.now() < end) s += spin(100000);
  return s;
}

if (isMainThread) {
  const end = Date.now() + 1000 * Number(process.argv[2] || 1e9);
  for (let i = 0; i < 2; i++) new Worker(__filename, { workerData: end });
  process.stdout.write('ready\n');
  mainSpin(end);
} else {
  workerSpin(workerData);
}
