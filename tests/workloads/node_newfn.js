// A Node.js workload that keeps compiling new code: round i makes a new function with
// new Function and calls it hot enough for V8 to compile it (Sparkplug, TurboFan), then
// prints "round i S", S depending on i only, so that a second run gives the same lines.
// Usage: node_newfn.js [SECONDS [ROUNDS [GAP_MS]]]: stops after SECONDS (0: never) or
// ROUNDS rounds (0: no limit), waiting GAP_MS (default 20) between rounds in the event loop.
'use strict';

const seconds = Number(process.argv[2] || 0);
const rounds = Number(process.argv[3] || 0);
const gap = Number(process.argv[4] === undefined ? 20 : process.argv[4]);
const end = seconds > 0 ? Date.now() + 1000 * seconds : Infinity;

function round(i) {
  const f = new Function('x', `return (x * ${(i % 97) + 1} + ${i}) & 0xffff;`);
  let s = 0;
  for (let k = 0; k < 200000; k++) s = (s + f(k)) % 1000003;
  return s;
}

function next(i) {
  if ((rounds > 0 && i >= rounds) || Date.now() >= end) return;
  process.stdout.write(`round ${i} ${round(i)}\n`);
  if (gap > 0) setTimeout(next, gap, i + 1);
  else setImmediate(next, i + 1);
}

next(0);
