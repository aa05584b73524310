/* kiln flamegraph renderer: one module for the standalone HTML files and the web UI.
 *
 *   var tree = KilnFlame.fromStacks({names: [...], stacks: [[id, ...], ...], counts: [...]});
 *   var view = KilnFlame.mount(container, tree, {title: '...'});   // bar + canvas + tooltip
 *   var view = KilnFlame.render(canvas, tree, options);            // the canvas alone
 *
 * Input: {names, stacks, counts[, counts2][, prefixed]}: stacks are frame-name ids, root
 * first; with prefixed, the stacks are sorted by frame names, stacks[i][0] is how many
 * leading frames stack i shares with stack i-1 and the rest are the new frames. counts2 makes a diff tree (A = counts, B = counts2).
 * Or a Pyroscope flamebearer, single or double (KilnFlame.fromFlamebearer).
 *
 * The tree is built once into typed arrays in preorder, so a subtree is the index range
 * [i, i + size[i]) and a frame too narrow to draw skips its whole subtree in one step.
 * Every node has a (total A) and as (self A); a diff tree also b and bs. w is the layout
 * weight (a, or a/totalA + b/totalB for a diff, so both profiles count equally) and off the
 * node's left edge in those units. Frame names are never put into HTML: textContent only. */
(function (global) {
	'use strict';

	var TAGS = { k: 'kernel', p: 'python', j: 'java', i: 'java', 0: 'java', rb: 'ruby',
		php: 'php', net: 'dotnet', js: 'js' };
	var RUNTIMES = { /* hue range, saturation, label */
		native: [0, 14, 72, 'native'], kernel: [28, 44, 85, 'kernel'],
		python: [200, 218, 65, 'Python'], java: [95, 125, 55, 'Java'],
		go: [172, 188, 60, 'Go'], js: [52, 62, 70, 'JavaScript'],
		ruby: [328, 344, 65, 'Ruby'], php: [255, 272, 55, 'PHP'],
		dotnet: [228, 242, 60, '.NET'], meta: [0, 0, 0, 'other']
	};
	var GO_PKG = /^(main|runtime|sync|syscall|internal|reflect|fmt|time|os|io|bufio|strings|bytes|encoding|crypto|compress|math|sort|strconv|context|net|errors|unicode|hash|regexp|text|log|mime|path|container|image|debug|html|archive|testing|embed|slices|maps|iter|cmp|unique|weak)[./][^\s:]*[A-Za-z_)]$/;
	var GO_MOD = /^[a-z0-9-]+(\.[a-z0-9-]+)+\/[^\s:]*\.[^\s:]+$/;
	var C_CLONE = /\.(part|isra|constprop|cold|lto_priv|localalias|llvm)\b/;

	/* Which runtime a frame belongs to, from gProfiler's annotations and Go's naming. */
	function runtimeOf(name) {
		var n = name.length;
		if (n > 3 && name.charCodeAt(n - 1) === 93) {
			var o = name.lastIndexOf('_[');
			if (o >= 0 && TAGS.hasOwnProperty(name.slice(o + 2, n - 1)))
				return TAGS[name.slice(o + 2, n - 1)];
		}
		if (name.charAt(0) === '[')
			return 'meta';
		if ((GO_PKG.test(name) || GO_MOD.test(name)) && !C_CLONE.test(name))
			return 'go';
		return 'native';
	}

	function label(name) {
		var o = name.lastIndexOf('_[');
		return o > 0 && name.charCodeAt(name.length - 1) === 93 ? name.slice(0, o) : name;
	}

	function hash(s) {
		var h = 2166136261;
		for (var i = 0; i < s.length; i++)
			h = Math.imul(h ^ s.charCodeAt(i), 16777619);
		return (h >>> 0) / 4294967296;
	}

	function frameColor(name, rt) {
		var r = RUNTIMES[rt], v = hash(label(name));
		if (rt === 'meta')
			return 'hsl(0,0%,' + (78 + 8 * v).toFixed(1) + '%)';
		return 'hsl(' + (r[0] + (r[1] - r[0]) * v).toFixed(1) + ',' + r[2] + '%,' +
			(62 + 12 * hash(name + '.')).toFixed(1) + '%)';
	}

	/* Red for growth, green for shrinkage, near white for no change. */
	function diffColor(ratio) {
		var m = Math.min(1, Math.abs(ratio));
		return ratio >= 0 ? 'hsl(0,80%,' + (94 - 34 * m).toFixed(1) + '%)'
			: 'hsl(125,55%,' + (94 - 36 * m).toFixed(1) + '%)';
	}

	/* ---- building the tree ---- */

	/* Nodes in creation order (a parent before its children) in growable typed arrays.
	 * Children are found through a sibling list, or a Map once a node has many. */
	function Builder(names, diff, hint) {
		this.names = names;
		this.n = 1; this.cap = Math.max(1024, hint || 0);
		this.parent = new Int32Array(this.cap); this.name = new Int32Array(this.cap);
		this.first = new Int32Array(this.cap); this.next = new Int32Array(this.cap);
		this.nkids = new Int32Array(this.cap);
		this.as = new Float64Array(this.cap); this.bs = diff ? new Float64Array(this.cap) : null;
		this.parent[0] = -1; this.name[0] = names.length; this.first[0] = -1; this.next[0] = -1;
		this.maps = new Map();
	}
	function grow(a, cap) { var b = new a.constructor(cap); b.set(a); return b; }
	Builder.prototype.add = function (p, id) {
		if (this.n === this.cap) {
			var c = this.cap *= 2;
			this.parent = grow(this.parent, c); this.name = grow(this.name, c);
			this.first = grow(this.first, c); this.next = grow(this.next, c);
			this.nkids = grow(this.nkids, c); this.as = grow(this.as, c);
			if (this.bs) this.bs = grow(this.bs, c);
		}
		var k = this.n++;
		this.parent[k] = p; this.name[k] = id; this.first[k] = -1;
		this.next[k] = this.first[p]; this.first[p] = k;
		if (++this.nkids[p] > 8) {
			var m = this.maps.get(p);
			if (!m) {
				this.maps.set(p, m = new Map());
				for (var c2 = this.next[k]; c2 >= 0; c2 = this.next[c2]) m.set(this.name[c2], c2);
			}
			m.set(id, k);
		}
		return k;
	};
	Builder.prototype.child = function (p, id) {
		if (this.nkids[p] > 8) {
			var k = this.maps.get(p).get(id);
			return k === undefined ? this.add(p, id) : k;
		}
		for (var c = this.first[p]; c >= 0; c = this.next[c])
			if (this.name[c] === id) return c;
		return this.add(p, id);
	};

	/* Preorder (a node, then its children's subtrees sorted by name) of a builder whose
	 * nodes were not created in that order. Returns new index -> builder index. */
	function preorder(bld, names) {
		var n = bld.n, i, k, nm = bld.name;
		var start = new Int32Array(n + 1), kid = new Int32Array(Math.max(n - 1, 1)), fill;
		for (i = 1; i < n; i++) start[bld.parent[i] + 1]++;
		for (i = 0; i < n; i++) start[i + 1] += start[i];
		fill = start.slice(0, n);
		for (i = 1; i < n; i++) kid[fill[bld.parent[i]]++] = i;
		/* siblings by name (equal names: by name id); lists that come sorted, as a
		 * flamebearer's mostly do, are only checked */
		var byName = function (x, y) {
			var a = names[nm[x]], b = names[nm[y]];
			return a < b ? -1 : a > b ? 1 : nm[x] - nm[y];
		};
		for (i = 0; i < n; i++) {
			var s0 = start[i], s1 = start[i + 1];
			if (s1 - s0 < 2) continue;
			for (k = s0 + 1; k < s1 && byName(kid[k - 1], kid[k]) <= 0; k++);
			if (k < s1) kid.subarray(s0, s1).sort(byName);
		}
		var order = new Int32Array(n), stack = new Int32Array(n), sp = 0, at = 0;
		stack[sp++] = 0;
		while (sp) {
			var old = stack[--sp];
			order[at++] = old;
			for (k = start[old + 1] - 1; k >= start[old]; k--) stack[sp++] = kid[k];
		}
		return order;
	}

	function finish(bld, inPreorder) {
		var n = bld.n, names = bld.names.slice(), i, p;
		names.push('all');
		var T = { names: names, n: n, diff: !!bld.bs, name: null, depth: new Int32Array(n),
			size: new Int32Array(n), parent: null, a: null, as: null, b: null, bs: null,
			w: null, off: new Float64Array(n), totalA: 0, totalB: 0, maxDepth: 0, rt: null };
		if (inPreorder) {
			T.name = bld.name.subarray(0, n); T.parent = bld.parent.subarray(0, n);
			T.as = bld.as.subarray(0, n); T.bs = T.diff ? bld.bs.subarray(0, n) : null;
		} else {
			var order = preorder(bld, names), back = new Int32Array(n);
			for (i = 0; i < n; i++) back[order[i]] = i;
			T.name = new Int32Array(n); T.parent = new Int32Array(n); T.as = new Float64Array(n);
			T.bs = T.diff ? new Float64Array(n) : null;
			for (i = 0; i < n; i++) {
				var o = order[i];
				T.name[i] = bld.name[o]; T.parent[i] = i ? back[bld.parent[o]] : -1;
				T.as[i] = bld.as[o];
				if (T.diff) T.bs[i] = bld.bs[o];
			}
		}
		/* In preorder a parent comes before its children: totals and sizes sum backwards,
		 * depths and offsets go forwards. */
		var ta = T.a = T.as.slice(), tb = T.b = T.diff ? T.bs.slice() : null, par = T.parent;
		for (i = n - 1; i > 0; i--) {
			T.size[i] += 1; p = par[i];
			T.size[p] += T.size[i]; ta[p] += ta[i];
			if (tb) tb[p] += tb[i];
		}
		T.size[0] += 1;
		T.totalA = ta[0]; T.totalB = tb ? tb[0] : 0;
		var fa = T.totalA > 0 ? 1 / T.totalA : 0, fb = T.totalB > 0 ? 1 / T.totalB : 0;
		var w = T.w = tb ? new Float64Array(n) : ta, cursor = new Float64Array(n), md = 0;
		for (i = 0; i < n; i++) {
			if (tb) w[i] = ta[i] * fa + tb[i] * fb;
			if (i === 0) continue;
			p = par[i];
			var d = T.depth[i] = T.depth[p] + 1;
			if (d > md) md = d;
			T.off[i] = cursor[i] = cursor[p];
			cursor[p] += w[i];
		}
		T.maxDepth = md;
		T.rt = names.map(runtimeOf);
		return T;
	}

	/* Builds a tree from {names, stacks, counts[, counts2][, prefixed]}. */
	function fromStacks(data) {
		var names = data.names, diff = !!data.counts2, pre = !!data.prefixed, s, frames = 1;
		for (s = 0; pre && s < data.stacks.length; s++) frames += data.stacks[s].length;
		var bld = new Builder(names, diff, frames), path = [0], nn = names.length;
		for (s = 0; s < data.stacks.length; s++) {
			var st = data.stacks[s], keep = 0, first = 0;
			if (pre) { keep = Math.min(st[0] | 0, path.length - 1); first = 1; }
			path.length = keep + 1;
			var node = path[keep];
			for (var f = first; f < st.length; f++) {
				var id = st[f];
				if (!(id >= 0 && id < nn)) throw new Error('stack ' + s + ': bad frame id ' + id);
				/* sorted prefix-encoded stacks: a frame after the shared prefix is new */
				node = pre ? bld.add(node, id) : bld.child(node, id);
				path.push(node);
			}
			bld.as[node] += +data.counts[s] || 0;
			if (diff) bld.bs[node] += +data.counts2[s] || 0;
		}
		/* nodes made along a path of the previous stack are in preorder already */
		return finish(bld, pre);
	}

	/* Builds a tree from Pyroscope's flamebearer JSON (the whole response or its
	 * "flamebearer" member), single ([x, total, self, name]) or double (7-tuples). */
	function fromFlamebearer(resp) {
		var fb = resp.flamebearer || resp, meta = resp.metadata || {};
		var double = meta.format === 'double' || (fb.levels[0] && fb.levels[0].length % 7 === 0 &&
			fb.levels[0].length % 4 !== 0);
		var step = double ? 7 : 4, names = fb.names, L, count = 1, widest = 1;
		for (L = 0; L < fb.levels.length; L++) {
			var nr = Math.floor(fb.levels[L].length / step);
			count += nr;
			if (nr > widest) widest = nr;
		}
		var bld = new Builder(names, double, count);
		/* the previous level's nodes: absolute [start, end) per side, and builder index */
		var prev = { n: 0, a0: new Float64Array(widest), a1: new Float64Array(widest),
			b0: new Float64Array(widest), b1: new Float64Array(widest), node: new Int32Array(widest) };
		var cur = { n: 0, a0: new Float64Array(widest), a1: new Float64Array(widest),
			b0: new Float64Array(widest), b1: new Float64Array(widest), node: new Int32Array(widest) };
		for (L = 0; L < fb.levels.length; L++) {
			var row = fb.levels[L], xa = 0, xb = 0, pi = 0;
			cur.n = 0;
			for (var i = 0; i + step <= row.length; i += step) {
				var ax = xa + row[i], at = row[i + 1], as = row[i + 2];
				var bx = 0, bt = 0, bs = 0;
				if (double) { bx = xb + row[i + 3]; bt = row[i + 4]; bs = row[i + 5]; xb = bx + bt; }
				xa = ax + at;
				var node;
				if (L === 0) {
					node = 0;
				} else {
					/* rows are sorted, so a child's parent is the first one left that contains it */
					while (pi < prev.n && !(ax >= prev.a0[pi] && ax + at <= prev.a1[pi] &&
						(!double || (bx >= prev.b0[pi] && bx + bt <= prev.b1[pi]))))
						pi++;
					if (pi >= prev.n) throw new Error('flamebearer: orphan node at level ' + L);
					node = bld.child(prev.node[pi], row[i + step - 1]);
				}
				bld.as[node] += as;
				if (double) bld.bs[node] += bs;
				var k = cur.n++;
				cur.a0[k] = ax; cur.a1[k] = ax + at; cur.b0[k] = bx; cur.b1[k] = bx + bt;
				cur.node[k] = node;
			}
			var t = prev; prev = cur; cur = t;
		}
		return finish(bld, false);
	}

	/* ---- drawing ---- */

	function fmt(n) { return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
	/* A formatter of values in unit (a profile type's: "bytes", "nanoseconds", "count";
	 * what counts: "samples", "objects", ...): "1.5 MiB", "12.0 ms", "1,234 samples". */
	function quantityOf(unit, what) {
		function scaled(n, steps, base) {
			var i = 0, v = n;
			while (i + 1 < steps.length && Math.abs(v) >= base) { v /= base; i++; }
			return (i ? v.toFixed(1) : fmt(v)) + ' ' + steps[i];
		}
		if (unit === 'bytes')
			return function (n) { return scaled(n, ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'], 1024); };
		if (unit === 'nanoseconds')
			return function (n) {
				if (Math.abs(n) < 1e3) return fmt(n) + ' ns';
				if (Math.abs(n) < 1e6) return (n / 1e3).toFixed(1) + ' \u00b5s';
				if (Math.abs(n) < 1e9) return (n / 1e6).toFixed(1) + ' ms';
				return (n / 1e9).toFixed(2) + ' s';
			};
		var word = what || 'samples';
		return function (n) { return fmt(n) + ' ' + word; };
	}
	function pct(x, t) { return t > 0 ? (100 * x / t).toFixed(2) + '%' : '0%'; }

	/* Compiles a search: "/re/flags" is a regular expression, anything else a
	 * case-insensitive substring. Returns null for an empty query. */
	function matcher(q) {
		if (!q) return null;
		var m = /^\/(.+)\/([a-z]*)$/.exec(q);
		if (m) {
			try { var re = new RegExp(m[1], m[2]); return function (s) { return re.test(s); }; }
			catch (e) { /* not a valid expression: search for the text */ }
		}
		var low = q.toLowerCase();
		return function (s) { return s.toLowerCase().indexOf(low) >= 0; };
	}

	/* Which frames match query (matcher()), and the samples under a match, each sample
	 * counted once even under nested matches: {names: Uint8Array by name id, a, b,
	 * shareA, shareB}, or null for an empty query. */
	function searchTree(T, query) {
		var m = matcher(query);
		if (!m) return null;
		var mn = new Uint8Array(T.names.length - 1), sa = 0, sb = 0, i;
		for (i = 0; i < mn.length; i++) mn[i] = m(T.names[i]) ? 1 : 0;
		for (i = 1; i < T.n;) {
			if (T.name[i] < mn.length && mn[T.name[i]]) {
				sa += T.a[i]; if (T.diff) sb += T.b[i];
				i += T.size[i];
			} else i++;
		}
		return { names: mn, a: sa, b: sb, shareA: T.totalA ? sa / T.totalA : 0,
			shareB: T.totalB ? sb / T.totalB : 0 };
	}

	function render(canvas, T, opt) {
		opt = opt || {};
		var qty = opt.quantity || quantityOf();
		var rowH = opt.rowHeight || 18, minW = opt.minWidth || 0.5, font = opt.font ||
			'12px ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace';
		var ctx = canvas.getContext('2d'), view = { tree: T, zoomNode: 0, selected: -1,
			hovered: -1, match: null, inverted: !!opt.inverted, stats: { drawn: 0, merged: 0 } };
		var cap = 4096, dx = new Float64Array(cap), dw = new Float64Array(cap),
			drow = new Int32Array(cap), dnode = new Int32Array(cap), dcount = 0, rows = 1;
		var pendX = [], pendEnd = [], pendN = [], colors = new Array(T.names.length);

		function push(x, w, row, node) {
			if (dcount === cap) {
				cap *= 2;
				var nx = new Float64Array(cap), nw = new Float64Array(cap), nr = new Int32Array(cap),
					nd = new Int32Array(cap);
				nx.set(dx); nw.set(dw); nr.set(drow); nd.set(dnode);
				dx = nx; dw = nw; drow = nr; dnode = nd;
			}
			dx[dcount] = x; dw[dcount] = w; drow[dcount] = row; dnode[dcount] = node;
			if (row + 1 > rows) rows = row + 1;
			dcount++;
		}
		function flush(row) {
			if (pendN[row] > 0 && pendEnd[row] - pendX[row] >= minW)
				push(pendX[row], pendEnd[row] - pendX[row], row, -1 - pendN[row]);
			pendN[row] = 0;
		}
		/* Decides what is visible: frames of at least minW px, and runs of narrower
		 * neighbours merged into one grey block per row. */
		function layout(width) {
			var z = view.zoomNode, scale = width / (T.w[z] || 1), base = T.off[z], i, end;
			dcount = 0; rows = 1;
			for (i = T.parent[z]; i >= 0; i = T.parent[i]) push(0, width, T.depth[i], i);
			for (i = z, end = z + T.size[z]; i < end;) {
				var x = (T.off[i] - base) * scale, w = T.w[i] * scale, d = T.depth[i];
				if (w >= minW) { push(x, w, d, i); i++; continue; }
				if (pendN[d] > 0 && x - pendEnd[d] < 0.01) { pendEnd[d] = x + w; pendN[d]++; }
				else { flush(d); pendX[d] = x; pendEnd[d] = x + w; pendN[d] = 1; }
				i += T.size[i];
			}
			for (i = 0; i < pendN.length; i++) flush(i);
		}

		function color(i) {
			if (view.match && view.matchName[T.name[i]]) return 'rgb(224,0,224)';
			if (T.diff) {
				var sa = T.totalA ? T.a[i] / T.totalA : 0, sb = T.totalB ? T.b[i] / T.totalB : 0;
				var hi = Math.max(sa, sb);
				return diffColor(hi > 0 ? (sb - sa) / hi : 0);
			}
			var id = T.name[i];
			return colors[id] || (colors[id] = frameColor(T.names[id], T.rt[id]));
		}

		function draw() {
			var width = Math.max(100, opt.width || canvas.parentNode && canvas.parentNode.clientWidth || 800);
			layout(width);
			var dpr = global.devicePixelRatio || 1, height = rows * rowH;
			canvas.style.width = width + 'px'; canvas.style.height = height + 'px';
			canvas.width = Math.round(width * dpr); canvas.height = Math.round(height * dpr);
			ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
			ctx.font = font; ctx.textBaseline = 'middle';
			var charW = ctx.measureText('MMMMMMMMMM').width / 10 || 7, merged = 0;
			ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, width, height);
			for (var k = 0; k < dcount; k++) {
				var i = dnode[k], x = dx[k], w = dw[k];
				var y = (view.inverted ? rows - 1 - drow[k] : drow[k]) * rowH;
				if (i < 0) {
					ctx.fillStyle = '#c8c8c8'; ctx.fillRect(x, y, w, rowH - 1); merged -= i + 1;
					continue;
				}
				var anc = i !== view.zoomNode && T.depth[i] < T.depth[view.zoomNode];
				ctx.fillStyle = color(i);
				ctx.fillRect(x, y, Math.max(w - (w > 2 ? 1 : 0), 0.5), rowH - 1);
				if (anc) { ctx.fillStyle = 'rgba(255,255,255,0.45)'; ctx.fillRect(x, y, w, rowH - 1); }
				if (w >= 3 * charW + 6) {
					var s = i === 0 ? 'all' : label(T.names[T.name[i]]), fit = Math.floor((w - 6) / charW);
					if (s.length > fit) s = s.slice(0, fit - 1) + '\u2026';
					ctx.fillStyle = '#000'; ctx.fillText(s, x + 3, y + rowH / 2);
				}
				if (i === view.selected || i === view.hovered) {
					ctx.strokeStyle = i === view.selected ? '#0033cc' : '#333';
					ctx.lineWidth = i === view.selected ? 2 : 1;
					ctx.strokeRect(x + 1, y + 1, Math.max(w - 2, 1), rowH - 3);
				}
			}
			view.stats = { drawn: dcount, merged: merged, rows: rows };
			canvas.setAttribute('data-kiln-frames', String(dcount));
			if (opt.onDraw) opt.onDraw(view);
		}

		/* Index into the drawn list of the frame under (x, y) in CSS pixels, or -1. */
		function hitAt(x, y) {
			var r = Math.floor(y / rowH);
			if (view.inverted) r = rows - 1 - r;
			for (var k = 0; k < dcount; k++)
				if (drow[k] === r && x >= dx[k] && x < dx[k] + dw[k]) return k;
			return -1;
		}

		view.draw = draw;
		/* Where node i is drawn, in CSS pixels of the canvas, or null when it is not. */
		view.rectOf = function (i) {
			for (var k = 0; k < dcount; k++)
				if (dnode[k] === i) {
					var r = view.inverted ? rows - 1 - drow[k] : drow[k];
					return { x: dx[k], y: r * rowH, w: dw[k], h: rowH - 1 };
				}
			return null;
		};
		/* The first node named name in preorder, or -1. */
		view.find = function (name) {
			for (var i = 1; i < T.n; i++) if (T.names[T.name[i]] === name) return i;
			return -1;
		};
		/* Facts about node i for tooltips and the status line. */
		view.info = function (i) {
			var z = view.zoomNode, name = i === 0 ? 'all' : T.names[T.name[i]];
			var r = { node: i, name: name, runtime: RUNTIMES[T.rt[T.name[i]]][3], lines: [] };
			if (i === 0) r.runtime = '';
			if (T.diff) {
				var sa = T.totalA ? T.a[i] / T.totalA : 0, sb = T.totalB ? T.b[i] / T.totalB : 0;
				r.lines.push('total: A ' + qty(T.a[i]) + ' (' + pct(T.a[i], T.totalA) + ')  B ' +
					qty(T.b[i]) + ' (' + pct(T.b[i], T.totalB) + ')');
				r.lines.push('self: A ' + qty(T.as[i]) + ' (' + pct(T.as[i], T.totalA) + ')  B ' +
					qty(T.bs[i]) + ' (' + pct(T.bs[i], T.totalB) + ')');
				r.lines.push('change: ' + (sb >= sa ? '+' : '') + (100 * (sb - sa)).toFixed(2) +
					' percentage points of the total');
			} else {
				r.lines.push('total: ' + qty(T.a[i]) + ' (' + pct(T.a[i], T.totalA) +
					(z ? ', ' + pct(T.a[i], T.a[z]) + ' of zoom' : '') + ')');
				r.lines.push('self: ' + qty(T.as[i]) + ' (' + pct(T.as[i], T.totalA) + ')');
			}
			return r;
		};
		view.zoom = function (i) {
			view.zoomNode = i >= 0 && i < T.n ? i : 0;
			if (view.selected < 0) view.selected = view.zoomNode;
			draw();
			if (opt.onZoom) opt.onZoom(view.zoomNode);
		};
		view.reset = function () { view.zoom(0); };
		view.select = function (i) {
			view.selected = i;
			draw();
			if (opt.onSelect) opt.onSelect(i >= 0 ? view.info(i) : null);
		};
		/* Highlights the frames matching query; returns {a, b, shareA, shareB} for the
		 * samples under a match (each sample counted once), or null when cleared. */
		view.search = function (query) {
			var r = searchTree(T, query);
			view.match = r; view.matchName = r && r.names;
			draw();
			return r;
		};
		view.flip = function () { view.inverted = !view.inverted; draw(); };
		/* Keyboard moves: 'parent', 'child', 'left', 'right' from the selected frame. */
		view.move = function (dir) {
			var s = view.selected >= 0 ? view.selected : view.zoomNode, k, best = -1;
			if (dir === 'parent') { if (T.parent[s] >= 0) view.select(T.parent[s]); return; }
			var sk = -1;
			for (k = 0; k < dcount; k++) if (dnode[k] === s) sk = k;
			if (sk < 0) { view.select(view.zoomNode); return; }
			for (k = 0; k < dcount; k++) {
				if (dnode[k] < 0) continue;
				if (dir === 'child' && T.parent[dnode[k]] === s && (best < 0 || dw[k] > dw[best])) best = k;
				if (drow[k] !== drow[sk]) continue;
				if (dir === 'left' && dx[k] < dx[sk] && (best < 0 || dx[k] > dx[best])) best = k;
				if (dir === 'right' && dx[k] > dx[sk] && (best < 0 || dx[k] < dx[best])) best = k;
			}
			if (best >= 0) view.select(dnode[best]);
		};

		function pos(ev) {
			var r = canvas.getBoundingClientRect(); return [ev.clientX - r.left, ev.clientY - r.top];
		}
		function onMove(ev) {
			var p = pos(ev), k = hitAt(p[0], p[1]), i = k >= 0 ? dnode[k] : -1;
			if (opt.onHover) opt.onHover(k < 0 ? null : i < 0 ? { merged: -1 - i } : view.info(i), ev);
			if (i !== view.hovered) { view.hovered = i; draw(); }
		}
		function onLeave() { view.hovered = -1; draw(); if (opt.onHover) opt.onHover(null); }
		function onClick(ev) {
			var p = pos(ev), k = hitAt(p[0], p[1]);
			if (k >= 0 && dnode[k] >= 0) { view.selected = dnode[k]; view.zoom(dnode[k]); }
		}
		function onKey(ev) {
			var keys = { ArrowUp: view.inverted ? 'child' : 'parent', ArrowDown: view.inverted ? 'parent' : 'child',
				ArrowLeft: 'left', ArrowRight: 'right' };
			if (keys[ev.key]) view.move(keys[ev.key]);
			else if (ev.key === 'Enter' || ev.key === ' ') view.zoom(view.selected >= 0 ? view.selected : 0);
			else if (ev.key === 'Escape') view.reset();
			else if (ev.key === 'Backspace') view.zoom(Math.max(0, T.parent[view.zoomNode]));
			else return;
			ev.preventDefault();
		}
		var handlers = { mousemove: onMove, mouseleave: onLeave, click: onClick, keydown: onKey };
		Object.keys(handlers).forEach(function (t) { canvas.addEventListener(t, handlers[t]); });
		view.destroy = function () {
			Object.keys(handlers).forEach(function (t) { canvas.removeEventListener(t, handlers[t]); });
		};
		draw();
		return view;
	}

	function el(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls) e.className = cls;
		if (text !== undefined) e.textContent = text;	/* never innerHTML: names are untrusted */
		return e;
	}

	/* Builds the controls (search, reset, flip, legend), the canvas and its tooltip inside
	 * container, and returns the render() view. options: title, subtitle, plus render()'s. */
	function mount(container, T, options) {
		var o = {}, k;
		for (k in options || {}) o[k] = options[k];
		var mq = o.quantity || quantityOf();
		var root = el('div', 'kf'), bar = el('div', 'kf-bar'), wrap = el('div', 'kf-wrap');
		if (o.title) root.appendChild(el('h1', 'kf-title', o.title));
		if (o.subtitle) root.appendChild(el('p', 'kf-sub', o.subtitle));
		var reset = el('button', 'kf-btn', 'Reset zoom'), flip = el('button', 'kf-btn', 'Flip');
		var search = el('input', 'kf-search'), found = el('span', 'kf-found');
		search.type = 'search'; search.placeholder = 'Search: text or /regex/';
		search.setAttribute('aria-label', 'Search frames (text, or /regex/)');
		found.setAttribute('aria-live', 'polite');
		bar.appendChild(reset); bar.appendChild(flip); bar.appendChild(search); bar.appendChild(found);
		root.appendChild(bar);
		var legend = el('div', 'kf-legend'), seen = {};
		if (T.diff) {
			legend.appendChild(el('span', 'kf-key kf-grow', 'grew in B'));
			legend.appendChild(el('span', 'kf-key kf-shrink', 'shrank in B'));
			legend.appendChild(el('span', 'kf-note', 'A: ' + mq(T.totalA) + ', B: ' +
				mq(T.totalB) + '; widths are the mean of both shares'));
		} else {
			for (k = 0; k < T.names.length - 1; k++) seen[T.rt[k]] = 1;
			Object.keys(RUNTIMES).forEach(function (rt) {
				if (!seen[rt]) return;
				var chip = el('span', 'kf-key', RUNTIMES[rt][3]);
				chip.style.background = frameColor(RUNTIMES[rt][3], rt);
				legend.appendChild(chip);
			});
			legend.appendChild(el('span', 'kf-note', mq(T.totalA)));
		}
		root.appendChild(legend);
		var status = el('div', 'kf-status', 'Click a frame to zoom; arrow keys move, Enter zooms, ' +
			'Esc resets, / searches.');
		status.setAttribute('aria-live', 'polite');
		root.appendChild(status);
		var canvas = el('canvas', 'kf-canvas'), tip = el('div', 'kf-tip');
		canvas.tabIndex = 0;
		canvas.setAttribute('role', 'img');
		canvas.setAttribute('aria-label', 'Flamegraph; focus it and use the arrow keys to move between frames');
		tip.hidden = true;
		wrap.appendChild(canvas); wrap.appendChild(tip); root.appendChild(wrap);
		container.appendChild(root);

		function describe(info, node) {
			node.textContent = '';
			var head = el('div', 'kf-tip-name', info.name);
			node.appendChild(head);
			if (info.runtime) node.appendChild(el('div', 'kf-tip-rt', info.runtime));
			info.lines.forEach(function (l) { node.appendChild(el('div', '', l)); });
		}
		o.onHover = function (info, ev) {
			if (!info) { tip.hidden = true; return; }
			if (info.merged) { tip.textContent = info.merged + ' frames too narrow to draw; zoom in to see them'; }
			else describe(info, tip);
			tip.hidden = false;
			var r = wrap.getBoundingClientRect(), x = ev.clientX - r.left + 14, y = ev.clientY - r.top + 14;
			if (x + tip.offsetWidth > wrap.clientWidth) x = Math.max(0, wrap.clientWidth - tip.offsetWidth);
			tip.style.left = x + 'px'; tip.style.top = y + 'px';
		};
		o.onSelect = function (info) {
			if (!info) return;
			status.textContent = info.name + (info.runtime ? ' [' + info.runtime + ']' : '') + ' \u2014 ' +
				info.lines.join('; ');
		};
		var view = render(canvas, T, o);
		reset.addEventListener('click', function () { view.reset(); canvas.focus(); });
		flip.addEventListener('click', function () { view.flip(); });
		function doSearch() {
			var r = view.search(search.value);
			found.textContent = !r ? '' : T.diff ? 'matched: A ' + pct(r.a, T.totalA) + ', B ' + pct(r.b, T.totalB)
				: 'matched: ' + mq(r.a) + ' (' + pct(r.a, T.totalA) + ')';
		}
		search.addEventListener('input', doSearch);
		search.addEventListener('keydown', function (ev) {
			if (ev.key === 'Enter') canvas.focus();
			if (ev.key === 'Escape') { search.value = ''; doSearch(); canvas.focus(); }
		});
		function onSlash(ev) {
			if (ev.key === '/' && document.activeElement !== search) { ev.preventDefault(); search.focus(); }
		}
		function onResize() { view.draw(); }
		document.addEventListener('keydown', onSlash);
		global.addEventListener('resize', onResize);
		var destroyCanvas = view.destroy;
		view.destroy = function () {	/* for a UI that mounts again: leave nothing behind */
			destroyCanvas();
			document.removeEventListener('keydown', onSlash);
			global.removeEventListener('resize', onResize);
			container.removeChild(root);
		};
		view.searchInput = search;
		return view;
	}

	global.KilnFlame = { fromStacks: fromStacks, fromFlamebearer: fromFlamebearer, render: render,
		mount: mount, runtimeOf: runtimeOf, matcher: matcher, search: searchTree,
		quantity: quantityOf,
		/* a frame's fill colour and its runtime's display name, for legends and tables */
		colorOf: function (name) { return frameColor(name, runtimeOf(name)); },
		runtimeName: function (name) { return RUNTIMES[runtimeOf(name)][3]; } };
})(typeof window !== 'undefined' ? window : this);
