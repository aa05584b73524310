/* kiln web UI: the table of functions beside the flamegraph. Per function name: self
 * samples, and total samples counted once per stack even when the function recurses; for
 * a diff, both sides' shares and the change. Sortable (header buttons), filterable, and
 * keyboard usable (arrow keys move between rows, Enter or a click selects: onSelect(id)).
 *
 *   var t = new KilnTable(tableEl, filterInput, countEl, {onSelect: fn(nameId or -1)});
 *   t.setTree(tree[, filter]); t.setSort('total', -1); t.select(nameId);  */
(function (global) {
	'use strict';

	var MAX_ROWS = 400;
	/* rows built at once; the rest follow in the next task, so that a new profile's
	 * visible rows (about 30) do not wait for the layout of all 400 */
	var FIRST_ROWS = 60;

	function fmt(n) { return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
	function pct(x) { return (100 * x).toFixed(2) + '%'; }
	function el(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls) e.className = cls;
		if (text !== undefined) e.textContent = text;
		return e;
	}

	/* Self and total per name id over the preorder tree of flamegraph.js. A node's total
	 * counts only when no ancestor has the same name, so recursion is not counted twice. */
	function stats(T) {
		var nn = T.names.length - 1, st = {
			self: new Float64Array(nn), total: new Float64Array(nn),
			selfB: T.diff ? new Float64Array(nn) : null, totalB: T.diff ? new Float64Array(nn) : null,
			present: new Uint8Array(nn)
		};
		var active = new Int32Array(nn), stack = new Int32Array(T.maxDepth + 2), sp = 0;
		for (var i = 1; i < T.n; i++) {
			while (sp && stack[sp - 1] + T.size[stack[sp - 1]] <= i) active[T.name[stack[--sp]]]--;
			var id = T.name[i];
			if (id >= nn) continue;
			st.present[id] = 1;
			st.self[id] += T.as[i];
			if (T.diff) st.selfB[id] += T.bs[i];
			if (!active[id]) {
				st.total[id] += T.a[i];
				if (T.diff) st.totalB[id] += T.b[i];
			}
			active[id]++;
			stack[sp++] = i;
		}
		return st;
	}

	function Table(table, filter, count, opts) {
		this.table = table; this.filterInput = filter; this.count = count; this.opts = opts || {};
		this.T = null; this.st = null; this.rows = []; this.selected = -1;
		this.sortKey = 'self'; this.sortDir = -1; this.filter = '';
		var self = this;
		filter.addEventListener('input', function () {
			self.filter = filter.value;
			self.render();
			if (self.opts.onFilter) self.opts.onFilter(self.filter);
		});
		table.tBodies[0].addEventListener('click', function (ev) {
			var tr = ev.target.closest('tr');
			if (tr && tr.dataset.id) self.choose(+tr.dataset.id, tr);
		});
		table.tBodies[0].addEventListener('keydown', function (ev) {
			var tr = ev.target.closest('tr');
			if (!tr) return;
			var next = ev.key === 'ArrowDown' ? tr.nextElementSibling : ev.key === 'ArrowUp' ?
				tr.previousElementSibling : null;
			if (next && next.dataset.id) { self.focusRow(next); ev.preventDefault(); }
			else if (ev.key === 'Enter' || ev.key === ' ') { self.choose(+tr.dataset.id, tr); ev.preventDefault(); }
			else if (ev.key === 'Escape') { self.choose(-1); ev.preventDefault(); }
		});
	}

	Table.prototype.columns = function () {
		if (this.T && this.T.diff)
			return [['name', 'Function'], ['totalA', 'Total A'], ['totalB', 'Total B'],
				['delta', 'Change'], ['selfDelta', 'Self change']];
		return [['name', 'Function'], ['self', 'Self'], ['total', 'Total']];
	};

	/* Shows tree T (filtered by filter when given: one render for both). */
	Table.prototype.setTree = function (T, filter) {
		if (filter !== undefined) {
			this.filter = filter || '';
			this.filterInput.value = this.filter;
		}
		this.T = T;
		this.st = T ? stats(T) : null;
		if (T && T.diff && !/^(name|totalA|totalB|delta|selfDelta)$/.test(this.sortKey)) this.sortKey = 'delta';
		if (T && !T.diff && !/^(name|self|total)$/.test(this.sortKey)) this.sortKey = 'self';
		this.render();
	};

	/* A row's sort value for key. */
	Table.prototype.value = function (id, key) {
		var T = this.T, st = this.st, ta = T.totalA || 1, tb = T.totalB || 1;
		switch (key) {
		case 'name': return T.names[id];
		case 'self': return st.self[id];
		case 'total': return st.total[id];
		case 'totalA': return st.total[id] / ta;
		case 'totalB': return st.totalB[id] / tb;
		case 'delta': return st.totalB[id] / tb - st.total[id] / ta;
		case 'selfDelta': return st.selfB[id] / tb - st.self[id] / ta;
		}
		return 0;
	};

	Table.prototype.setSort = function (key, dir) {
		this.sortKey = key; this.sortDir = dir;
		this.render();
	};

	Table.prototype.setFilter = function (text) {
		this.filter = text || '';
		this.filterInput.value = this.filter;
		this.render();
	};

	Table.prototype.focusRow = function (tr) {
		var old = this.table.tBodies[0].querySelector('tr[tabindex="0"]');
		if (old) old.tabIndex = -1;
		tr.tabIndex = 0;
		tr.focus();
	};

	Table.prototype.choose = function (id, tr) {
		this.select(this.selected === id ? -1 : id);
		if (tr) this.focusRow(tr);
		if (this.opts.onSelect) this.opts.onSelect(this.selected);
	};

	Table.prototype.select = function (id) {
		this.selected = id;
		var rows = this.table.tBodies[0].rows;
		for (var i = 0; i < rows.length; i++)
			rows[i].setAttribute('aria-selected', String(+rows[i].dataset.id === id));
	};

	Table.prototype.render = function () {
		var self = this, T = this.T, thead = this.table.tHead, tbody = this.table.tBodies[0];
		thead.textContent = ''; tbody.textContent = '';
		clearTimeout(this.pending);
		if (!T) return;
		var hr = el('tr'), cols = this.columns();
		cols.forEach(function (c) {
			var th = el('th'), b = el('button', '', c[1]);
			b.type = 'button';
			th.setAttribute('scope', 'col');
			if (c[0] === self.sortKey) {
				th.setAttribute('aria-sort', self.sortDir < 0 ? 'descending' : 'ascending');
				b.textContent += self.sortDir < 0 ? ' \u25bc' : ' \u25b2';
			} else th.setAttribute('aria-sort', 'none');
			b.dataset.key = c[0];
			b.addEventListener('click', function () {
				var dir = c[0] === self.sortKey ? -self.sortDir : c[0] === 'name' ? 1 : -1;
				self.setSort(c[0], dir);
				if (self.opts.onSort) self.opts.onSort(self.sortKey, self.sortDir);
			});
			th.appendChild(b); hr.appendChild(th);
		});
		thead.appendChild(hr);

		var ids = [], st = this.st, m = global.KilnFlame.matcher(this.filter), id;
		for (id = 0; id < st.present.length; id++)
			if (st.present[id] && (!m || m(T.names[id]))) ids.push(id);
		var key = this.sortKey, dir = this.sortDir, vals = new Map();
		ids.forEach(function (x) { vals.set(x, self.value(x, key)); });
		ids.sort(function (x, y) {
			var a = vals.get(x), b = vals.get(y);
			if (a < b) return -dir;
			if (a > b) return dir;
			return T.names[x] < T.names[y] ? -1 : 1;
		});
		this.rows = ids;
		var shown = Math.min(ids.length, MAX_ROWS);
		this.appendRows(0, Math.min(shown, FIRST_ROWS));
		if (shown > FIRST_ROWS)
			this.pending = setTimeout(function () { self.appendRows(FIRST_ROWS, shown); }, 0);
		this.count.textContent = ids.length > shown ? shown + ' of ' + fmt(ids.length) + ' functions' :
			fmt(ids.length) + ' functions';
	};

	/* Appends the rows of this.rows[from..to) to the table body. */
	Table.prototype.appendRows = function (from, to) {
		var self = this, T = this.T, st = this.st, tbody = this.table.tBodies[0], id;
		var frag = document.createDocumentFragment();
		for (var r = from; r < to; r++) {
			id = this.rows[r];
			var tr = el('tr'), name = T.names[id], fn = el('td', 'fn');
			tr.dataset.id = id;
			tr.tabIndex = r === 0 ? 0 : -1;
			tr.setAttribute('aria-selected', String(id === this.selected));
			var sw = el('span', 'swatch');
			sw.style.background = global.KilnFlame.colorOf ? global.KilnFlame.colorOf(name) : '#ccc';
			fn.appendChild(sw); fn.appendChild(document.createTextNode(name)); fn.title = name;
			tr.appendChild(fn);
			if (T.diff) {
				var ta = T.totalA || 1, tb = T.totalB || 1, d = self.value(id, 'delta'), sd = self.value(id, 'selfDelta');
				tr.appendChild(el('td', '', pct(st.total[id] / ta)));
				tr.appendChild(el('td', '', pct(st.totalB[id] / tb)));
				tr.appendChild(el('td', d > 0 ? 'grew' : d < 0 ? 'shrank' : '', (d > 0 ? '+' : '') + (100 * d).toFixed(2) + ' pp'));
				tr.appendChild(el('td', sd > 0 ? 'grew' : sd < 0 ? 'shrank' : '', (sd > 0 ? '+' : '') + (100 * sd).toFixed(2) + ' pp'));
			} else {
				var tot = T.totalA || 1;
				tr.appendChild(el('td', '', fmt(st.self[id]) + ' (' + pct(st.self[id] / tot) + ')'));
				tr.appendChild(el('td', '', fmt(st.total[id]) + ' (' + pct(st.total[id] / tot) + ')'));
			}
			frag.appendChild(tr);
		}
		tbody.appendChild(frag);
	};

	/* Self, total and their shares of the function with name id, for the status line. */
	Table.prototype.describe = function (id) {
		var T = this.T, st = this.st;
		if (!T || id < 0 || !st.present[id]) return '';
		if (T.diff)
			return T.names[id] + ' \u2014 total: A ' + pct(st.total[id] / (T.totalA || 1)) + ', B ' +
				pct(st.totalB[id] / (T.totalB || 1));
		return T.names[id] + ' \u2014 self ' + fmt(st.self[id]) + ' (' + pct(st.self[id] / (T.totalA || 1)) +
			'), total ' + fmt(st.total[id]) + ' (' + pct(st.total[id] / (T.totalA || 1)) + ')';
	};

	global.KilnTable = Table;
	global.KilnTable.stats = stats;
})(window);
