/* kiln web UI: the page's state, kept in the URL so that a link restores the view, the API
 * calls behind it, and the wiring of the flamegraph (flamegraph.js), the timeline
 * (timeline.js) and the functions table (table.js).
 *
 * URL parameters: service, from, until (Pyroscope times: now-1h, seconds), f.LABEL=value
 * (filters), search, fn (function selected in the table), zoom (frame names from the root,
 * joined by ';'), sort (key, '-' first for descending), flip=1, maxNodes, and for the diff
 * view mode=diff with aFrom, aUntil, bFrom, bUntil, a.LABEL and b.LABEL. The API is
 * kiln serve's own: /api/apps, /api/labels (every label with its values),
 * /pyroscope/render, /pyroscope/render-diff and /api/series.
 *
 * A server with tokens answers 401 without one: the page then asks for a read token and
 * keeps it for the browser tab's session (sessionStorage 'kiln.token'), sent as
 * `Authorization: Bearer`; downloads are fetched with it. */
(function (global) {
	'use strict';

	var $ = function (id) { return document.getElementById(id); };
	var FIRST_LABELS = ['host', 'container', 'process'];
	var S = null;			/* the state, see parseState() */
	var labelValues = {};		/* label name -> values, for the service in S */
	var labelsFor = null;		/* service whose labels are in labelValues */
	var tree = null, view = null, seq = 0, apps = [];
	/* for tests and bench/ui: the state, tree and view; readyAt is performance.now() when the
	 * last load finished drawing, drawMs how long building the tree and drawing took */
	var app = global.kilnApp = { state: null, tree: null, view: null, ready: false, readyAt: 0, drawMs: 0 };

	/* ---- state and URL ---- */

	function parseState(search) {
		var p = new URLSearchParams(search), st = {
			service: p.get('service') || '', from: p.get('from') || 'now-1h',
			until: p.get('until') || 'now', filters: {}, search: p.get('search') || '',
			fn: p.get('fn') || '', zoom: p.get('zoom') ? p.get('zoom').split(';') : [],
			sort: p.get('sort') || '', flip: p.get('flip') === '1',
			maxNodes: p.get('maxNodes') || '', mode: p.get('mode') === 'diff' ? 'diff' : 'single',
			a: { from: p.get('aFrom') || '', until: p.get('aUntil') || '', filters: {} },
			b: { from: p.get('bFrom') || '', until: p.get('bUntil') || '', filters: {} },
			tfilter: p.get('tfilter') || ''
		};
		p.forEach(function (v, k) {
			var m = /^([fab])\.([A-Za-z_][A-Za-z0-9_.]*)$/.exec(k);
			if (!m || !v) return;
			(m[1] === 'f' ? st.filters : st[m[1]].filters)[m[2]] = v;
		});
		return st;
	}

	function stateQuery(st) {
		var p = new URLSearchParams();
		function put(k, v) { if (v) p.set(k, v); }
		put('service', st.service); put('from', st.from); put('until', st.until);
		Object.keys(st.filters).sort().forEach(function (k) { put('f.' + k, st.filters[k]); });
		put('search', st.search); put('fn', st.fn); put('zoom', st.zoom.join(';'));
		put('sort', st.sort); put('flip', st.flip ? '1' : ''); put('maxNodes', st.maxNodes);
		put('tfilter', st.tfilter);
		if (st.mode === 'diff') {
			p.set('mode', 'diff');
			['a', 'b'].forEach(function (s) {
				put(s + 'From', st[s].from); put(s + 'Until', st[s].until);
				Object.keys(st[s].filters).sort().forEach(function (k) { put(s + '.' + k, st[s].filters[k]); });
			});
		}
		return p.toString();
	}

	/* Writes S into the address bar; push makes a history entry (a new query). Zooms and
	 * keystrokes come fast: those (push false) are written once they pause, since browsers
	 * throttle history updates. */
	var saveTimer = 0;
	function saveState(push) {
		clearTimeout(saveTimer);
		if (!push) { saveTimer = setTimeout(writeState, 80); return; }
		writeState(true);
	}
	function writeState(push) {
		var url = location.pathname + '?' + stateQuery(S);
		if (url === location.pathname + location.search) return;
		if (push) history.pushState(null, '', url); else history.replaceState(null, '', url);
	}

	/* ---- times and selectors ---- */

	/* Seconds since 1970 for a Pyroscope time ("now", "now-2h", seconds), NaN if neither. */
	function toSeconds(t, now) {
		var m = /^now(?:-(\d+)(s|m|h|d|w))?$/.exec(t);
		if (m) return now - (m[1] ? +m[1] * { s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[m[2]] : 0);
		return /^\d{9,10}$/.test(t) ? +t : NaN;
	}
	/* What the user typed into a time box: a Pyroscope time, or a local date and time. */
	function parseTimeInput(text) {
		text = text.trim();
		if (/^now(-\d+[smhdw])?$/.test(text) || /^\d{9,10}$/.test(text)) return text;
		var ms = Date.parse(text.replace(' ', 'T'));
		return isNaN(ms) ? null : String(Math.round(ms / 1000));
	}
	function showTime(t) {
		if (!/^\d+$/.test(t)) return t;
		var d = new Date(+t * 1000), p = function (n) { return n < 10 ? '0' + n : n; };
		return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + ' ' +
			p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds());
	}

	function quote(v) { return '"' + v.replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"'; }
	function selector(service, filters) {
		var keys = Object.keys(filters).filter(function (k) { return filters[k]; }).sort();
		return service + (keys.length ? '{' + keys.map(function (k) { return k + '=' + quote(filters[k]); }).join(',') + '}' : '');
	}
	function merged(base, over) {
		var r = {}, k;
		for (k in base) r[k] = base[k];
		for (k in over) r[k] = over[k];
		return r;
	}
	/* The two sides of a diff: ranges default to the halves of the main range. */
	function sides(now) {
		var f = toSeconds(S.from, now), u = toSeconds(S.until, now), mid = Math.round((f + u) / 2);
		return {
			a: { from: S.a.from || String(f), until: S.a.until || String(mid), q: selector(S.service, merged(S.filters, S.a.filters)) },
			b: { from: S.b.from || String(mid), until: S.b.until || String(u), q: selector(S.service, merged(S.filters, S.b.filters)) }
		};
	}

	/* ---- API ---- */

	var TOKEN_KEY = 'kiln.token';
	function token() {
		try { return global.sessionStorage.getItem(TOKEN_KEY) || ''; } catch (e) { return ''; }
	}
	function authHeaders() {
		var t = token();
		return t ? { Authorization: 'Bearer ' + t } : {};
	}
	/* Shows the token form (once); a submitted token is kept for the session and the page
	 * reloads with it. A token that was refused is forgotten. */
	var asking = false;
	function askToken(refused) {
		if (asking) return;
		asking = true;
		try { global.sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* private mode */ }
		$('auth-msg').textContent = refused ? 'The server refused this token: it needs a read token.'
			: 'This server needs a token to show its profiles.';
		$('auth').hidden = false;
		document.body.dataset.state = 'auth';
		$('auth-token').focus();
	}
	$('auth').addEventListener('submit', function (ev) {
		ev.preventDefault();
		var t = $('auth-token').value.trim();
		if (!t) return;
		try { global.sessionStorage.setItem(TOKEN_KEY, t); } catch (e) { /* private mode */ }
		global.location.reload();
	});

	function api(path, params) {
		var url = path + (params ? '?' + new URLSearchParams(params).toString() : '');
		return fetch(url, { headers: authHeaders() }).then(function (r) {
			if (r.status === 401 || r.status === 403) askToken(!!token());
			return r.json().catch(function () { return {}; }).then(function (body) {
				if (!r.ok) throw new Error((body && body.error) || ('HTTP ' + r.status + ' for ' + path));
				return body;
			});
		});
	}
	function renderParams(extra) {
		var p = { query: selector(S.service, S.filters), from: S.from, until: S.until };
		if (S.maxNodes) p.maxNodes = S.maxNodes;
		for (var k in extra) p[k] = extra[k];
		return p;
	}
	function diffParams(extra) {
		var sd = sides(Math.floor(Date.now() / 1000)), p = {
			leftQuery: sd.a.q, leftFrom: sd.a.from, leftUntil: sd.a.until,
			rightQuery: sd.b.q, rightFrom: sd.b.from, rightUntil: sd.b.until };
		if (S.maxNodes) p.maxNodes = S.maxNodes;
		for (var k in extra) p[k] = extra[k];
		return p;
	}

	function showError(msg) {
		var e = $('error');
		e.textContent = msg || '';
		e.hidden = !msg;
	}

	/* ---- controls ---- */

	function labelSelect(name, value, onChange) {
		var lab = document.createElement('label'), sel = document.createElement('select');
		lab.className = 'field';
		lab.appendChild(document.createTextNode(name));
		var any = document.createElement('option');
		any.value = ''; any.textContent = '(any)';
		sel.appendChild(any);
		var vals = (labelValues[name] || []).slice();
		if (value && vals.indexOf(value) < 0) vals.push(value);
		vals.forEach(function (v) {
			var o = document.createElement('option');
			o.value = v; o.textContent = v;
			sel.appendChild(o);
		});
		sel.value = value || '';
		sel.dataset.label = name;
		sel.addEventListener('change', function () { onChange(name, sel.value); });
		lab.appendChild(sel);
		return lab;
	}
	function labelNames() {
		var names = Object.keys(labelValues);
		return FIRST_LABELS.filter(function (n) { return names.indexOf(n) >= 0; })
			.concat(names.filter(function (n) { return FIRST_LABELS.indexOf(n) < 0; }).sort());
	}
	function buildFilters() {
		var box = $('filters');
		box.textContent = '';
		labelNames().forEach(function (n) {
			box.appendChild(labelSelect(n, S.filters[n], function (k, v) {
				if (v) S.filters[k] = v; else delete S.filters[k];
				S.zoom = [];
				saveState(true); load();
			}));
		});
		['a', 'b'].forEach(function (s) {
			var box2 = $(s + '-filters');
			box2.textContent = '';
			labelNames().forEach(function (n) {
				box2.appendChild(labelSelect(n, S[s].filters[n], function (k, v) {
					if (v) S[s].filters[k] = v; else delete S[s].filters[k];
				}));
			});
		});
	}

	function syncControls() {
		if (apps.length) showServiceMeta();	/* the service and profile pickers */
		var preset = $('preset'), isPreset = S.until === 'now' &&
			[].some.call(preset.options, function (o) { return o.value === S.from; });
		preset.value = isPreset ? S.from : 'custom';
		$('from').value = showTime(S.from); $('until').value = showTime(S.until);
		$('mode-single').setAttribute('aria-pressed', String(S.mode === 'single'));
		$('mode-diff').setAttribute('aria-pressed', String(S.mode === 'diff'));
		$('diffbar').hidden = S.mode !== 'diff';
		var sd = sides(Math.floor(Date.now() / 1000));
		['a', 'b'].forEach(function (s) {
			$(s + '-from').value = showTime(S[s].from || sd[s].from);
			$(s + '-until').value = showTime(S[s].until || sd[s].until);
		});
		$('search').value = S.search;
	}

	function updateDownloads() {
		var col = S.mode === 'diff' ? renderParams({ query: sides(Math.floor(Date.now() / 1000)).b.q }) : renderParams();
		$('dl-col').href = '/pyroscope/render?' + new URLSearchParams(merged(col, { format: 'collapsed' }));
		$('dl-pprof').href = '/pyroscope/render?' + new URLSearchParams(merged(col, { format: 'pprof' }));
		$('dl-html').href = S.mode === 'diff' ? '/pyroscope/render-diff?' + new URLSearchParams(diffParams({ format: 'html' }))
			: '/pyroscope/render?' + new URLSearchParams(merged(col, { format: 'html' }));
		['dl-col', 'dl-pprof', 'dl-html'].forEach(function (id) { $(id).setAttribute('download', ''); });
	}
	/* A link cannot send the token: with one, a download is fetched and saved from a blob. */
	['dl-col', 'dl-pprof', 'dl-html'].forEach(function (id) {
		$(id).addEventListener('click', function (ev) {
			if (!token() || ev.currentTarget.dataset.blob) return;
			ev.preventDefault();
			var a = ev.currentTarget;
			fetch(a.href, { headers: authHeaders() }).then(function (r) {
				if (!r.ok) throw new Error('HTTP ' + r.status + ' for the download');
				var name = (/filename="?([^";]+)/.exec(r.headers.get('Content-Disposition') || '') || [])[1];
				return r.blob().then(function (b) { return [b, name]; });
			}).then(function (res) {
				var tmp = document.createElement('a');
				tmp.href = URL.createObjectURL(res[0]);
				tmp.download = res[1] || 'profile';
				tmp.dataset.blob = '1';
				document.body.appendChild(tmp);
				tmp.click();
				tmp.remove();
				setTimeout(function () { URL.revokeObjectURL(tmp.href); }, 10000);
			}).catch(function (e) { showError(e.message); });
		});
	});

	/* ---- flamegraph ---- */

	function zoomPath(i) {
		var path = [];
		for (; i > 0; i = tree.parent[i]) path.push(tree.names[tree.name[i]]);
		return path.reverse();
	}
	function findPath(path) {
		var node = 0;
		for (var d = 0; d < path.length; d++) {
			var c = node + 1, end = node + tree.size[node], hit = -1;
			for (; c < end; c += tree.size[c]) if (tree.names[tree.name[c]] === path[d]) { hit = c; break; }
			if (hit < 0) break;
			node = hit;
		}
		return node;
	}
	function nameId(name) {
		var i = name && tree ? tree.names.indexOf(name) : -1;
		return i < tree.names.length - 1 ? i : -1;
	}

	/* Search matches and the function chosen in the table, highlighted together. */
	function highlight() {
		if (!view) return;
		var fid = nameId(S.fn), T = tree;
		if (!S.search && fid < 0 && !view.match) { $('found').textContent = ''; return; }	/* nothing to redraw */
		var r = view.search(S.search);
		$('found').textContent = !r ? '' : T.diff ? 'matched: A ' + pct(r.shareA) + ', B ' + pct(r.shareB)
			: 'matched: ' + quantity()(r.a) + ' (' + pct(r.shareA) + ')';
		if (fid >= 0) {
			var names = r ? r.names.slice() : new Uint8Array(T.names.length - 1);
			names[fid] = 1;
			view.match = r || { a: 0, b: 0 }; view.matchName = names;
			view.draw();
			$('status').textContent = table.describe(fid);
		}
	}
	function fmt(n) { return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
	function pct(x) { return (100 * x).toFixed(2) + '%'; }
	/* Values in the unit of the service's profile type (its id's 3rd field): bytes,
	 * nanoseconds, or counts of its sample type (samples, objects, goroutines, ...). */
	function quantity() {
		var cur = apps.filter(function (a) { return a.name === S.service; })[0];
		var f = (cur && cur.profileType || '').split(':'), what = f[1] || 'samples';
		if (/objects$/.test(what)) what = 'objects';
		else if (what === 'goroutine') what = 'goroutines';
		return KilnFlame.quantity(f[2], what);
	}

	function legend(T) {
		var box = $('legend'), seen = {}, i;
		box.textContent = '';
		function chip(text, color, cls) {
			var s = document.createElement('span');
			s.className = 'kf-key' + (cls ? ' ' + cls : ''); s.textContent = text;
			if (color) s.style.background = color;
			box.appendChild(s);
		}
		if (T.diff) {
			chip('grew in B', '', 'kf-grow'); chip('shrank in B', '', 'kf-shrink');
		} else {
			/* the tree has each name's runtime already (T.rt): one name per runtime */
			var first = {};
			for (i = 0; i < T.names.length - 1; i++)
				if (!first.hasOwnProperty(T.rt[i])) first[T.rt[i]] = T.names[i];
			Object.keys(first).forEach(function (k) {
				var rt = KilnFlame.runtimeName(first[k]);
				if (!seen[rt]) seen[rt] = first[k];
			});
			Object.keys(seen).sort().forEach(function (rt) { chip(rt, KilnFlame.colorOf(seen[rt])); });
		}
		var note = document.createElement('span');
		note.className = 'kf-note';
		var q = quantity();
		note.textContent = T.diff ? 'A: ' + q(T.totalA) + ', B: ' + q(T.totalB) +
			'; widths are the mean of both shares' : q(T.totalA);
		box.appendChild(note);
	}

	function onHover(info, ev) {
		var tip = $('tip'), wrap = $('flame-wrap');
		if (!info) { tip.hidden = true; return; }
		tip.textContent = '';
		if (info.merged) tip.textContent = info.merged + ' frames too narrow to draw; zoom in to see them';
		else {
			var h = document.createElement('div');
			h.className = 'kf-tip-name'; h.textContent = info.name; tip.appendChild(h);
			if (info.runtime) { var rt = document.createElement('div'); rt.className = 'kf-tip-rt'; rt.textContent = info.runtime; tip.appendChild(rt); }
			info.lines.forEach(function (l) { var d = document.createElement('div'); d.textContent = l; tip.appendChild(d); });
		}
		tip.hidden = false;
		var r = wrap.getBoundingClientRect(), x = ev.clientX - r.left + 14, y = ev.clientY - r.top + 14;
		if (x + tip.offsetWidth > wrap.clientWidth) x = Math.max(0, wrap.clientWidth - tip.offsetWidth);
		tip.style.left = x + 'px'; tip.style.top = y + 'px';
	}

	/* Keeps only the names that frames use: a flamebearer truncated to maxNodes still lists
	 * every name of the profile, and the renderer sorts and classifies all it is given. */
	function compactNames(resp) {
		var fb = resp.flamebearer, step = resp.metadata && resp.metadata.format === 'double' ? 7 : 4;
		var map = new Int32Array(fb.names.length).fill(-1), names = [];
		fb.levels.forEach(function (row) {
			for (var i = step - 1; i < row.length; i += step) {
				var id = row[i];
				if (map[id] < 0) { map[id] = names.length; names.push(fb.names[id]); }
				row[i] = map[id];
			}
		});
		fb.names = names;
		return resp;
	}

	function showTree(T) {
		var t0 = performance.now();
		if (view) view.destroy();
		tree = app.tree = T;
		view = app.view = KilnFlame.render($('flame'), T, {
			inverted: S.flip, onHover: onHover, quantity: quantity(),
			onZoom: function (i) { S.zoom = zoomPath(i); saveState(false); },
			onSelect: function (info) { if (info) $('status').textContent = info.name + (info.runtime ? ' [' + info.runtime + ']' : '') + ' \u2014 ' + info.lines.join('; '); }
		});
		if (S.zoom.length) { view.selected = findPath(S.zoom); view.zoom(view.selected); }
		legend(T);
		table.setTree(T, S.tfilter);
		table.select(nameId(S.fn));
		highlight();
		app.drawMs = performance.now() - t0;
	}

	/* ---- loading ---- */

	function loadLabels() {
		if (labelsFor === S.service) return Promise.resolve();
		var q = { query: S.service, from: 'now-30d' };
		return api('/api/labels', q).then(function (sets) {
			labelValues = {};
			Object.keys(sets).forEach(function (n) {
				if (n !== '__name__' && /^[A-Za-z_][A-Za-z0-9_.]*$/.test(n)) labelValues[n] = sets[n];
			});
			labelsFor = S.service;
		});
	}

	function load() {
		var my = ++seq, now = Math.floor(Date.now() / 1000);
		app.state = S; app.ready = false;
		document.body.dataset.state = 'loading';
		syncControls();
		updateDownloads();
		showServiceMeta();
		if (!S.service) {
			showError('No service has uploaded profiles yet: upload .col files to POST /api/v2/profiles, ' +
				'or Pyroscope profiles to POST /ingest, and reload.');
			document.body.dataset.state = 'empty';
			return Promise.resolve();
		}
		var data = S.mode === 'diff' ? Promise.all([api('/pyroscope/render-diff', diffParams()),
			api('/api/series', renderParams())]) : api('/pyroscope/render', renderParams()).then(function (r) { return [r, r.timeline]; });
		/* the flamegraph is drawn as soon as its data is here, the filters when the labels
		 * are (their two requests in a row overlap the drawing); ready when both are done */
		var drawn = Promise.all([data, appsReady]).then(function (res) {
			if (my !== seq) return;
			var resp = res[0][0], tl = res[0][1], bands = [];
			if (S.mode === 'diff') {
				var sd = sides(now);
				bands.push({ from: toSeconds(sd.a.from, now), until: toSeconds(sd.a.until, now), color: 'rgba(36,86,200,0.18)', label: 'A' });
				bands.push({ from: toSeconds(sd.b.from, now), until: toSeconds(sd.b.until, now), color: 'rgba(184,92,0,0.20)', label: 'B' });
			}
			timeline.set(tl, bands);
			showTree(KilnFlame.fromFlamebearer(compactNames(resp)));
		});
		var filters = loadLabels().then(function () { if (my === seq) buildFilters(); });
		return Promise.all([drawn, filters]).then(function () {
			if (my !== seq) return;
			showError('');
			app.ready = true;
			app.readyAt = performance.now();
			document.body.dataset.state = 'ready';
			document.dispatchEvent(new Event('kiln:ready'));
		}).catch(function (e) {
			if (my !== seq || asking) return;
			showError('Failed to load the profile: ' + e.message);
			document.body.dataset.state = 'error';
		});
	}

	/* ---- wiring ---- */

	var table = new KilnTable($('functions'), $('table-filter'), $('table-count'), {
		onSelect: function (id) {
			S.fn = id >= 0 ? tree.names[id] : '';
			saveState(false); highlight();
			if (id < 0) $('status').textContent = '';
		},
		onSort: function (key, dir) { S.sort = (dir < 0 ? '-' : '') + key; saveState(false); },
		onFilter: function (text) { S.tfilter = text; saveState(false); }
	});
	var timeline = new KilnTimeline($('timeline'), {
		onHover: function (text) { $('tl-readout').textContent = text; },
		onSelect: function (a, b) {
			var side = document.querySelector('input[name="drag-side"]:checked');
			if (S.mode === 'diff') { S[side ? side.value : 'a'].from = String(a); S[side ? side.value : 'a'].until = String(b); }
			else { S.from = String(a); S.until = String(b); }
			S.zoom = [];
			saveState(true); load();
		}
	});

	function applySort() {
		if (!S.sort) return;
		var desc = S.sort.charAt(0) === '-';
		table.sortKey = desc ? S.sort.slice(1) : S.sort; table.sortDir = desc ? -1 : 1;
	}

	function pickService(name) {
		S.service = name; S.filters = {}; S.zoom = []; S.fn = '';
		S.a.filters = {}; S.b.filters = {};
		showServiceMeta();
		saveState(true); load();
	}
	/* The service picker lists Pyroscope's service names; the profile picker the types
	 * stored under the one chosen (app.cpu, app.alloc_space, ...), CPU first. */
	function typesOf(base) {
		return apps.filter(function (a) { return (a.serviceName || a.name) === base; })
			.sort(function (x, y) {
				var cx = /^process_cpu:/.test(x.profileType || ''), cy = /^process_cpu:/.test(y.profileType || '');
				return cx !== cy ? (cx ? -1 : 1) : x.name < y.name ? -1 : 1;
			});
	}
	$('service').addEventListener('change', function () {
		var t = typesOf(this.value);
		if (t.length) pickService(t[0].name);
	});
	$('ptype').addEventListener('change', function () { pickService(this.value); });
	$('preset').addEventListener('change', function () {
		if (this.value === 'custom') { $('from').focus(); return; }
		S.from = this.value; S.until = 'now'; S.zoom = [];
		saveState(true); load();
	});
	$('range-form').addEventListener('submit', function (ev) {
		ev.preventDefault();
		var f = parseTimeInput($('from').value), u = parseTimeInput($('until').value);
		if (!f || !u) { showError('Times are "now", "now-2h", "2026-11-30 13:00" or seconds since 1970.'); return; }
		S.from = f; S.until = u; S.zoom = [];
		saveState(true); load();
	});
	function setMode(m) {
		S.mode = m; S.zoom = [];
		saveState(true); load();
	}
	$('mode-single').addEventListener('click', function () { setMode('single'); });
	$('mode-diff').addEventListener('click', function () { setMode('diff'); });
	$('diff-apply').addEventListener('click', function () {
		var bad = false;
		['a', 'b'].forEach(function (s) {
			var f = parseTimeInput($(s + '-from').value), u = parseTimeInput($(s + '-until').value);
			if (!f || !u) bad = true; else { S[s].from = f; S[s].until = u; }
		});
		if (bad) { showError('Times are "now", "now-2h", "2026-11-30 13:00" or seconds since 1970.'); return; }
		S.zoom = [];
		saveState(true); load();
	});
	$('reset').addEventListener('click', function () { if (view) { view.reset(); $('flame').focus(); } });
	$('flip').addEventListener('click', function () {
		S.flip = !S.flip; saveState(false);
		if (view) view.flip();
	});
	$('search').addEventListener('input', function () {
		S.search = this.value; saveState(false); highlight();
	});
	$('search').addEventListener('keydown', function (ev) {
		if (ev.key === 'Enter') $('flame').focus();
		if (ev.key === 'Escape') { this.value = ''; S.search = ''; saveState(false); highlight(); $('flame').focus(); }
	});
	document.addEventListener('keydown', function (ev) {
		var t = ev.target.tagName;
		if (ev.key === '/' && t !== 'INPUT' && t !== 'SELECT' && t !== 'TEXTAREA') { ev.preventDefault(); $('search').focus(); }
	});
	$('flame').addEventListener('mouseleave', function () { $('tip').hidden = true; });
	global.addEventListener('resize', function () { if (view) view.draw(); });
	global.addEventListener('popstate', function () { S = parseState(location.search); applySort(); load(); });

	/* The service list; the page's first query does not wait for it when the URL names
	 * the service (the two requests run in parallel), but 'kiln:ready' does. */
	var appsReady = null;
	function typeLabel(a) {
		var f = (a.profileType || '').split(':');
		return f.length >= 3 ? f[0] + ' ' + f[1] + ' (' + f[2] + ')' : a.name;
	}
	function showServiceMeta() {
		var cur = apps.filter(function (a) { return a.name === S.service; })[0];
		var base = cur ? cur.serviceName || cur.name : '', sel = $('ptype');
		$('service').value = base;
		sel.textContent = '';
		typesOf(base).forEach(function (a) {
			var o = document.createElement('option');
			o.value = a.name; o.textContent = typeLabel(a);
			sel.appendChild(o);
		});
		sel.value = S.service;
		$('svc-meta').textContent = cur ? cur.spyName + ', ' + cur.sampleRate + ' Hz, ' + cur.units : '';
	}
	function start() {
		S = parseState(location.search);
		applySort();
		var named = !!S.service;
		appsReady = api('/api/apps').then(function (list) {
			var sel = $('service');
			apps = list;
			apps.sort(function (x, y) { return x.name < y.name ? -1 : 1; });
			var bases = {};
			apps.forEach(function (a) {
				var b = a.serviceName || a.name;
				if (bases[b]) return;
				bases[b] = 1;
				var o = document.createElement('option');
				o.value = b; o.textContent = b;
				sel.appendChild(o);
			});
			if (!S.service && apps.length) {
				S.service = typesOf(apps[0].serviceName || apps[0].name)[0].name;
				saveState(false);
			}
			showServiceMeta();
			return true;
		}).catch(function (e) {
			if (asking) return false;
			showError('Failed to list services: ' + e.message);
			document.body.dataset.state = 'error';
			return false;
		});
		if (named) load();
		else appsReady.then(function (ok) { if (ok) load(); });
	}
	start();
})(window);
