// bench/node.sh's workload: alpha and beta (inlined by TurboFan into phase) for argv[2]
// rounds of fixed work; prints "ready", then its wall and CPU seconds (then calls
// globalThis.kilnBenchDone, when a profiler preloaded into it set one: its stop).
'use strict';
function alpha(n) {
  let x = 0;
  for (let i = 0; i < n; i++) x = (x + i * 7) & 0xffffff;
  return x;
}
function beta(n) {
  let x = 0;
  for (let i = 0; i < n; i++) x = (x + i * 7) & 0xffffff;
  return x;
}
function dispatch(which, n) {
  return which ? alpha(n) : beta(n);
}
function phase(which, calls) {
  let s = 0;
  for (let k = 0; k < calls; k++) s += dispatch(which, 20000);
  return s;
}
const rounds = Number(process.argv[2] || 10);
process.stdout.write('ready\n');
const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
let s = 0;
for (let r = 0; r < rounds; r++) s += phase(true, 700) + phase(false, 300);
const c = process.cpuUsage(c0);
process.stdout.write(`${Number(process.hrtime.bigint() - t0) / 1e9} ${(c.user + c.system) / 1e6} ${s & 1}\n`);
if (globalThis.kilnBenchDone) globalThis.kilnBenchDone();
