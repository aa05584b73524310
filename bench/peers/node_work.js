// bench/peers.sh's Node workload: a busy event loop (JSON, string and array work) for
// argv[2] seconds. Load only: no known answer is checked for it.
const end = Date.now() + 1000 * Number(process.argv[2] || 20);
function step(i) {
	const o = { id: i, name: "item" + i, tags: [i % 7, i % 11, i % 13] };
	return JSON.parse(JSON.stringify(o)).tags.reduce((a, b) => a + b, 0);
}
function tick() {
	let s = 0;
	for (let i = 0; i < 20000; i++) s += step(i);
	if (Date.now() < end) setImmediate(tick);
	else process.exit(s > 0 ? 0 : 1);
}
tick();
