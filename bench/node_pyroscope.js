// Preloaded (node -r) by bench/node.sh into its workload to run a Node-native profiler on
// the same work: the Pyroscope Node.js SDK (@pyroscope/nodejs, its wall profiler: V8's
// CpuProfiler through @datadog/pprof) at KILN_BENCH_HZ,
// pushing to KILN_BENCH_PYRO_URL (a sink on loopback) once, when the workload is done.
// Writes the CPU seconds the SDK took outside the workload's own measure (its require and
// start before the workload runs, its stop and upload after) into KILN_BENCH_PYRO_STOP.
'use strict';
const fs = require('fs');
const c0 = process.cpuUsage();
const Pyroscope = require('@pyroscope/nodejs').default;

const hz = Number(process.env.KILN_BENCH_HZ || 99);
Pyroscope.init({
  serverAddress: process.env.KILN_BENCH_PYRO_URL,
  appName: 'kiln-bench',
  flushIntervalMs: 3600 * 1000,	// one upload, at the stop
  wall: { samplingIntervalMicros: Math.round(1e6 / hz), samplingDurationMs: 3600 * 1000 },
});
Pyroscope.startWallProfiling();
const init = process.cpuUsage(c0);
// the workload calls it after its last line; the SDK's own timers would keep the process
// alive, so it exits once the upload is done
globalThis.kilnBenchDone = () => {
  const s0 = process.cpuUsage();
  Pyroscope.stopWallProfiling().finally(() => {
    const c = process.cpuUsage(s0);
    const us = init.user + init.system + c.user + c.system;
    fs.writeFileSync(process.env.KILN_BENCH_PYRO_STOP, `${us / 1e6}\n`);
    process.exit(0);
  });
};
