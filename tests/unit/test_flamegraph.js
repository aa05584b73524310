/* Unit test of the flamegraph renderer's data side (src/ui/flamegraph.js), run with node by
 * tests/e2e/flamegraph_js.sh: tree building from every input shape, the diff tree,
 * runtime colours, search shares. Drawing is checked in a real browser by flamegraph_html. */
'use strict';
const assert = require('assert');
const path = require('path');
global.window = global;
require(path.join(__dirname, '../../src/ui/flamegraph.js'));
const K = global.KilnFlame;

/* name path of node i, root excluded */
function pathOf(T, i) {
	const out = [];
	for (; i > 0; i = T.parent[i]) out.unshift(T.names[T.name[i]]);
	return out.join(';');
}
/* map "a;b;c" -> [total, self] (and B's for a diff tree) */
function table(T) {
	const m = {};
	for (let i = 1; i < T.n; i++)
		m[pathOf(T, i)] = T.diff ? [T.a[i], T.as[i], T.b[i], T.bs[i]] : [T.a[i], T.as[i]];
	return m;
}
/* the invariants every tree must keep: preorder, sizes, offsets inside the parent */
function checkShape(T) {
	for (let i = 1; i < T.n; i++) {
		const p = T.parent[i];
		assert(p < i, 'parent before child');
		assert(i < p + T.size[p], 'child inside parent range');
		assert.strictEqual(T.depth[i], T.depth[p] + 1);
		assert(T.off[i] >= T.off[p] - 1e-9 && T.off[i] + T.w[i] <= T.off[p] + T.w[p] + 1e-9);
	}
	assert.strictEqual(T.size[0], T.n);
}

const names = ['main', 'a', 'b', 'c', 'sys_write_[k]'];
const plain = { names, stacks: [[0, 1, 2], [0, 1], [0, 3, 4], [0, 1, 2], [0, 3]], counts: [5, 2, 7, 1, 3] };
const T = K.fromStacks(plain);
checkShape(T);
assert.strictEqual(T.totalA, 18);
assert.deepStrictEqual(table(T), {
	'main': [18, 0], 'main;a': [8, 2], 'main;a;b': [6, 6], 'main;c': [10, 3],
	'main;c;sys_write_[k]': [7, 7],
});
/* children are sorted by name: a before c */
assert.strictEqual(pathOf(T, 2), 'main;a');

/* the prefix-encoded sorted form the HTML writer emits gives the same tree */
const pre = { names, prefixed: true, stacks: [[0, 0, 1], [2, 2], [1, 3], [2, 4]], counts: [2, 6, 3, 7] };
const P = K.fromStacks(pre);
checkShape(P);
assert.deepStrictEqual(table(P), table(T));

/* bad ids are an error, not a broken tree */
assert.throws(() => K.fromStacks({ names, stacks: [[0, 9]], counts: [1] }), /bad frame id/);

/* flamebearer single: levels of [xDelta, total, self, name] */
const fb = {
	flamebearer: {
		names: ['total', 'main', 'a', 'c', 'b', 'sys_write_[k]'],
		levels: [[0, 18, 0, 0], [0, 18, 0, 1], [0, 8, 2, 2, 0, 10, 3, 3], [0, 6, 6, 4, 2, 7, 7, 5]],
		numTicks: 18, maxSelf: 7,
	},
	metadata: { format: 'single' },
};
const F = K.fromFlamebearer(fb);
checkShape(F);
assert.deepStrictEqual(table(F), table(T));

/* diff tree from two count columns, and the same from a double flamebearer */
const D = K.fromStacks({ names, stacks: [[0, 1], [0, 3]], counts: [10, 30], counts2: [30, 10] });
checkShape(D);
assert(D.diff);
assert.deepStrictEqual(table(D), { 'main': [40, 0, 40, 0], 'main;a': [10, 10, 30, 30], 'main;c': [30, 30, 10, 10] });
assert(Math.abs(D.w[0] - 2) < 1e-9, 'diff widths are the sum of both shares');
const DF = K.fromFlamebearer({
	flamebearer: {
		names: ['total', 'main', 'a', 'c'],
		levels: [[0, 40, 0, 0, 40, 0, 0], [0, 40, 0, 0, 40, 0, 1], [0, 10, 10, 0, 30, 30, 2, 0, 30, 30, 0, 10, 10, 3]],
		numTicks: 80,
	},
	metadata: { format: 'double' }, leftTicks: 40, rightTicks: 40,
});
checkShape(DF);
assert.deepStrictEqual(table(DF), table(D));

/* runtimes from gProfiler's annotations and Go's names */
const rt = {
	'do_syscall_64_[k]': 'kernel', 'handle (app.py:12)_[p]': 'python', 'Foo.bar_[j]': 'java',
	'Foo.inl_[i]': 'java', 'Foo.interp_[0]': 'java', 'block in x (a.rb:1)_[rb]': 'ruby',
	'index (i.php:2)_[php]': 'php', 'Program.Main_[net]': 'dotnet', 'handler app.js:1_[js]': 'js',
	'main.alpha': 'go', 'runtime.mallocgc': 'go', 'net/http.(*conn).serve': 'go',
	'github.com/acme/x.(*T).Run': 'go', 'deflate': 'native', 'memcpy.part.0': 'native',
	'(libfoo.so+0x1a2b)': 'native', 'std::vector<int>::push_back': 'native',
	'[Profiling skipped: no symbols]': 'meta',
};
for (const [n, want] of Object.entries(rt)) assert.strictEqual(K.runtimeOf(n), want, n);

/* search: substring (case-insensitive) and /regex/; nested matches count once */
const S = K.fromStacks({ names: ['main', 'work', 'work_inner', 'idle'], stacks: [[0, 1, 2], [0, 1], [0, 3]], counts: [3, 1, 6] });
let r = K.search(S, 'WORK');
assert.strictEqual(r.a, 4);
assert(Math.abs(r.shareA - 0.4) < 1e-12);
r = K.search(S, '/^idle$/');
assert.strictEqual(r.a, 6);
r = K.search(S, '/[unclosed/');	/* not a valid expression: searched as text */
assert.strictEqual(r.a, 0);
assert.strictEqual(K.search(S, ''), null);

/* 100,000 unique stacks build in one pass; the figure is printed, not asserted */
const big = { names: [], stacks: [], counts: [] };
for (let i = 0; i < 2000; i++) big.names.push('f' + i);
let seed = 1;	/* mulberry32 */
const rnd = (n) => {
	seed = (seed + 0x6D2B79F5) | 0;
	let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
	t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
	return ((t ^ (t >>> 14)) >>> 0) % n;
};
for (let s = 0; s < 100000; s++) {
	const st = [rnd(20), rnd(50), rnd(2000)];
	for (let d = rnd(25); d > 0; d--) st.push(rnd(2000));
	st.push(2000 - 1 - (s % 7));
	big.stacks.push(st); big.counts.push(1 + rnd(9));
}
const t0 = Date.now();
const B = K.fromStacks(big);
console.log('100000 stacks -> ' + B.n + ' nodes in ' + (Date.now() - t0) + ' ms');
checkShape(B);
assert.strictEqual(B.totalA, big.counts.reduce((x, y) => x + y, 0));
console.log('flamegraph.js: all checks passed');
