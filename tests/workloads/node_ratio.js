// Known-answer Node.js workload: alpha and beta share the CPU 70/30 through the call
// chain main -> phase -> dispatch -> alpha/beta, by CPU time (process.cpuUsage(), looked
// at every argv[4] calls, default 50, so that its cost stays out of the shares; a phase
// overruns its end by up to that many calls, which the next phase of its kind gives
// back; not by work: TurboFan's code for the two loops differs in speed, nor by wall
// time, which depends on how the host schedules the process), in phases of 7 and 3
// units of argv[3] ms (default 10: many phases in a short recording; a test of late
// reads takes longer ones). alpha and beta are small enough for TurboFan to inline them
// into phase. Runs for argv[2] seconds (default: forever). The LINE: markers let tests
// find the expected lines.
'use strict';

function alpha(n) {
  let x = 0;
  for (let i = 0; i < n; i++) x = (x + i * 7) & 0xffffff; // LINE:alpha
  return x;
}

function beta(n) {
  let x = 0;
  for (let i = 0; i < n; i++) x = (x + i * 7) & 0xffffff; // LINE:beta
  return x;
}

function dispatch(which, n) {
  if (which) return alpha(n); // LINE:dispatch-alpha
  return beta(n); // LINE:dispatch-beta
}

function cpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

const every = Number(process.argv[4] || 50);
const over = [0, 0]; // CPU ms the alpha and beta phases so far ran past their ends

// A phase ends at the first look at the clock past its end, and the next of its kind is
// that much shorter: over a run each kind gets its own share, however slow the code.
function phase(which, ms) { // LINE:phase-def
  const end = cpuMs() + ms - over[which ? 0 : 1];
  let s = 0;
  do {
    for (let k = 0; k < every; k++) s += dispatch(which, 20000); // LINE:phase
  } while (cpuMs() < end);
  over[which ? 0 : 1] = cpuMs() - end;
  return s;
}

function main() { // LINE:main
  const end = Date.now() + 1000 * Number(process.argv[2] || 1e9);
  const unit = Number(process.argv[3] || 10);
  let s = 0;
  process.stdout.write('ready\n');
  while (Date.now() < end) {
    s += phase(true, 7 * unit); // LINE:main-alpha
    s += phase(false, 3 * unit); // LINE:main-beta
  }
  return s;
}

main();
