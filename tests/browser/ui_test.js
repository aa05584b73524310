/* The web UI in a real browser against a real `kiln serve` holding uploaded profiles:
 * the page loads with no failed request and no console error, a service is picked, the
 * flamegraph draws, a click zooms, a search highlights, the table sorts and selects, a
 * label filter narrows, the downloads work, the diff view colours a frame that grew, and a
 * shared URL restores the view. Screenshots go to $ARTIFACTS (build/artifacts/).
 * Prints "ok - ..." per check; exits non-zero on the first failure. */
'use strict';
const assert = require('assert');
const path = require('path');
const L = require('./lib.js');

const ARTIFACTS = process.env.ARTIFACTS || path.join(L.ROOT, 'build/artifacts');
const VIEWPORT = { width: 1440, height: 900 };	/* a laptop screen */

/* Two hosts; an early window where slow_path is small and a late one where it grew. */
function col(host, slow, fast) {
	return '# {"hostname": "' + host + '", "sampling_frequency": 99}\n' +
		'0;;python3;main_[p];handle_[p];slow_path_[p];json_dumps_[p] ' + slow + '\n' +
		'0;;python3;main_[p];handle_[p];fast_path_[p] ' + fast + '\n' +
		'0;;python3;main_[p];io_[p];sys_read_[k] 40\n' +
		'0;web-1;nginx;main;ngx_process_events;epoll_wait_[k] 30\n' +
		'0;web-1;nginx;main;ngx_http_handler;ngx_http_core_run_phases 50\n' +
		'0;db-1;java;Thread.run_[j];Server.serve_[j];Query.exec_[j] 60\n' +
		'0;db-1;java;Thread.run_[j];GC.collect_[j] 25\n';
}

let step = 0;
function ok(what) { console.log('ok ' + (++step) + ' - ' + what); }

/* Pixel colour [r, g, b] of the flamegraph at the middle of node i. */
async function frameColor(page, i) {
	return page.evaluate((i) => {
		const T = kilnApp.tree, v = kilnApp.view, c = document.getElementById('flame');
		const w = c.clientWidth, z = v.zoomNode, scale = w / T.w[z];
		const x = (T.off[i] - T.off[z]) * scale + Math.min(4, T.w[i] * scale / 2);
		const y = T.depth[i] * 18 + 2, dpr = window.devicePixelRatio || 1;
		const d = c.getContext('2d').getImageData(Math.round(x * dpr), Math.round(y * dpr), 1, 1).data;
		return [d[0], d[1], d[2]];
	}, i);
}
/* Node index of the first frame called name (preorder), or -1. */
function nodeOf(page, name) {
	return page.evaluate((name) => {
		const T = kilnApp.tree;
		for (let i = 1; i < T.n; i++) if (T.names[T.name[i]] === name) return i;
		return -1;
	}, name);
}
/* Waits until the address bar holds text (the UI writes it once input pauses). */
function urlHas(page, text) {
	return page.waitForFunction((t) => decodeURIComponent(location.search).includes(t), text, { timeout: 5000 });
}
async function ready(page) {
	await page.waitForSelector('body[data-state="ready"], body[data-state="error"], body[data-state="empty"]',
		{ timeout: 15000 });
	const state = await page.getAttribute('body', 'data-state');
	assert.strictEqual(state, 'ready', 'page state ' + state + ': ' + await page.textContent('#error'));
}

async function main() {
	const srv = await L.startServer();
	let browser;
	try {
		browser = await L.launch();
		const ctx = await browser.newContext({ viewport: VIEWPORT, acceptDownloads: false });
		const page = await ctx.newPage();
		const w = L.watch(page);
		await page.goto(srv.url);
		await page.waitForSelector('body[data-state="empty"]', { timeout: 15000 });
		assert(/No service has uploaded profiles yet/.test(await page.textContent('#error')));
		ok('an empty server says how to upload, without errors');

		for (const [host, slow, fast] of [['host-a', 20, 180], ['host-b', 10, 90]])
			await L.upload(srv.url, 'shop', host, col(host, slow, fast), L.minutesAgo(50), L.minutesAgo(49));
		for (const [host, slow, fast] of [['host-a', 160, 40], ['host-b', 80, 20]])
			await L.upload(srv.url, 'shop', host, col(host, slow, fast), L.minutesAgo(15), L.minutesAgo(14));
		await L.upload(srv.url, 'billing', 'host-c', col('host-c', 5, 5), L.minutesAgo(5), L.minutesAgo(4));
		await L.upload(srv.url, 'billing', 'host-c', '0;;python3;main_[p];walk_[p];walk_[p];walk_[p] 10\n' +
			'0;;python3;main_[p];walk_[p] 5\n', L.minutesAgo(5), L.minutesAgo(4));
		ok('uploaded 6 profiles through POST /api/v2/profiles');

		await page.goto(srv.url + '?service=shop');
		await ready(page);
		assert.strictEqual(await page.inputValue('#service'), 'shop');
		const opts = await page.$$eval('#service option', (o) => o.map((x) => x.value));
		assert.deepStrictEqual(opts, ['billing', 'shop']);
		ok('the service picker lists both services, shop picked');

		const drawn = await page.evaluate(() => +document.getElementById('flame').getAttribute('data-kiln-frames'));
		assert(drawn >= 15, 'only ' + drawn + ' frames drawn');
		const total = await page.evaluate(() => kilnApp.tree.totalA);
		assert.strictEqual(total, 1420, 'total ' + total);	/* 405 + 305, twice */
		ok('the flamegraph draws ' + drawn + ' frames of ' + total + ' samples');
		const tl = await page.evaluate(() => document.getElementById('timeline').width > 0);
		assert(tl, 'no timeline');
		await page.screenshot({ path: path.join(ARTIFACTS, 'ui-single.png') });

		/* label values come from the API; a filter narrows the profile */
		const hosts = await page.$$eval('#filters select[data-label="host"] option', (o) => o.map((x) => x.value));
		assert.deepStrictEqual(hosts, ['', 'host-a', 'host-b']);
		await page.selectOption('#filters select[data-label="host"]', 'host-b');
		await ready(page);
		const hb = await page.evaluate(() => kilnApp.tree.totalA);
		assert.strictEqual(hb, 610, 'host-b total ' + hb);
		assert(page.url().includes('f.host=host-b'), page.url());
		await page.selectOption('#filters select[data-label="host"]', '');
		await ready(page);
		ok('label filter host=host-b narrows to ' + hb + ' samples and is in the URL');

		/* a preset range */
		await page.selectOption('#preset', 'now-30m');
		await ready(page);
		assert.strictEqual(await page.evaluate(() => kilnApp.tree.totalA), 710);
		assert(page.url().includes('from=now-30m'), page.url());
		await page.selectOption('#preset', 'now-1h');
		await ready(page);
		ok('the "Last 30 minutes" preset shows only the late uploads (710 samples)');

		/* click to zoom */
		const sp = await nodeOf(page, 'slow_path_[p]');
		assert(sp > 0, 'slow_path not in the tree');
		const box = await page.locator('#flame').boundingBox();
		const pos = await page.evaluate((i) => {
			const T = kilnApp.tree, w = document.getElementById('flame').clientWidth, s = w / T.w[0];
			return [T.off[i] * s + T.w[i] * s / 2, T.depth[i] * 18 + 9];
		}, sp);
		await page.mouse.move(box.x + pos[0], box.y + pos[1]);
		const tip = await page.textContent('#tip');
		assert(/slow_path/.test(tip) && /total: \d+ samples/.test(tip) && /self:/.test(tip), 'tooltip: ' + tip);
		await page.mouse.click(box.x + pos[0], box.y + pos[1]);
		assert.strictEqual(await page.evaluate(() => kilnApp.view.zoomNode), sp);
		await urlHas(page, 'zoom=python3;main_[p];handle_[p];slow_path_[p]');
		ok('a click zooms into slow_path (tooltip: self and total with shares); the zoom is in the URL');
		await page.screenshot({ path: path.join(ARTIFACTS, 'ui-zoomed.png') });
		await page.click('#reset');
		assert.strictEqual(await page.evaluate(() => kilnApp.view.zoomNode), 0);
		/* keyboard: the canvas has focus after Reset; Down selects the widest child, Enter zooms */
		assert.strictEqual(await page.evaluate(() => document.activeElement.id), 'flame');
		await page.keyboard.press('ArrowDown');
		await page.keyboard.press('Enter');
		const kz = await page.evaluate(() => kilnApp.view.zoomNode);
		assert(kz > 0, 'keyboard zoom stayed at the root');
		await page.keyboard.press('Escape');
		assert.strictEqual(await page.evaluate(() => kilnApp.view.zoomNode), 0);
		ok('keyboard: arrow keys select a frame, Enter zooms, Escape resets');

		/* search highlights and reports the share */
		await page.keyboard.press('/');
		await page.keyboard.type('json_dumps');
		const found = await page.textContent('#found');
		assert(/matched: 270 samples \(19\.01%\)/.test(found), 'found: ' + found);
		const jd = await nodeOf(page, 'json_dumps_[p]');
		assert.deepStrictEqual(await frameColor(page, jd), [224, 0, 224]);
		await urlHas(page, 'search=json_dumps');
		ok('search "json_dumps" highlights its frame in magenta and reports ' + found);

		/* the table sorts, and a row highlights its frames */
		await page.click('#functions th button[data-key="total"]');
		assert.strictEqual(await page.getAttribute('#functions th:nth-child(3)', 'aria-sort'), 'descending');
		const totals = await page.$$eval('#functions tbody tr td:nth-child(3)',
			(tds) => tds.map((t) => +t.textContent.split(' ')[0].replace(/,/g, '')));
		assert(totals.length >= 15, 'rows: ' + totals.length);
		for (let i = 1; i < totals.length; i++) assert(totals[i - 1] >= totals[i], 'not sorted: ' + totals);
		await page.click('#functions th button[data-key="total"]');
		assert.strictEqual(await page.getAttribute('#functions th:nth-child(3)', 'aria-sort'), 'ascending');
		await page.click('#functions th button[data-key="total"]');
		ok('the table sorts by total, descending then ascending (' + totals.length + ' functions)');
		await page.fill('#search', '');
		await page.dispatchEvent('#search', 'input');
		await page.fill('#table-filter', 'Query');
		await page.click('#functions tbody tr[data-id]');
		const qe = await nodeOf(page, 'Query.exec_[j]');
		assert.deepStrictEqual(await frameColor(page, qe), [224, 0, 224]);
		assert(/Query\.exec_\[j\] — self 240/.test(await page.textContent('#status')), await page.textContent('#status'));
		ok('filtering the table and selecting Query.exec highlights its frame');
		await page.fill('#search', 'json_dumps');
		await page.dispatchEvent('#search', 'input');
		await page.click('#flame', { position: { x: pos[0], y: pos[1] } });
		await page.screenshot({ path: path.join(ARTIFACTS, 'ui-search-table.png') });

		/* a shared link restores service, filters, zoom, search and the table's selection */
		await urlHas(page, 'fn=Query.exec_[j]');
		await urlHas(page, 'zoom=python3;main_[p];handle_[p];slow_path_[p]');
		const shared = page.url();
		const page2 = await ctx.newPage();
		const w2 = L.watch(page2);
		await page2.goto(shared);
		await ready(page2);
		const restored = await page2.evaluate(() => ({ zoom: kilnApp.view.zoomNode, search: document.getElementById('search').value,
			found: document.getElementById('found').textContent, service: document.getElementById('service').value,
			sel: document.querySelector('#functions tr[aria-selected="true"] td').textContent }));
		assert.strictEqual(restored.zoom, sp);
		assert.strictEqual(restored.search, 'json_dumps');
		assert.strictEqual(restored.service, 'shop');
		assert.strictEqual(restored.sel, 'Query.exec_[j]');
		assert(/matched/.test(restored.found));
		await page2.screenshot({ path: path.join(ARTIFACTS, 'ui-shared-link.png') });
		assert.deepStrictEqual(w2.problems(), []);
		ok('a shared URL restores service, zoom, search and the selected function');
		await page2.close();

		/* downloads of the current view: .col, pprof and standalone HTML */
		for (const [id, check] of [['dl-col', (b) => /python3;main_\[p\];handle_\[p\];slow_path_\[p\];json_dumps_\[p\] 270/.test(b.toString())],
			['dl-pprof', (b) => b[0] === 0x1f && b[1] === 0x8b],
			['dl-html', (b) => /KilnFlame/.test(b.toString()) && /<script/.test(b.toString())]]) {
			const href = await page.evaluate((id) => document.getElementById(id).href, id);
			const r = await fetch(href);
			assert.strictEqual(r.status, 200, href);
			assert(check(Buffer.from(await r.arrayBuffer())), id + ' content');
		}
		ok('the .col, pprof and HTML downloads of the current view are served');

		/* diff: A = the early window, B = the late one; slow_path grew, fast_path shrank */
		await page.click('#mode-diff');
		await ready(page);
		await page.fill('#a-from', String(L.minutesAgo(55)));
		await page.fill('#a-until', String(L.minutesAgo(40)));
		await page.fill('#b-from', String(L.minutesAgo(20)));
		await page.fill('#b-until', 'now');
		await page.click('#diff-apply');
		await ready(page);
		await page.fill('#search', '');
		await page.dispatchEvent('#search', 'input');
		await page.click('#reset');
		const d = await page.evaluate(() => ({ diff: kilnApp.tree.diff, a: kilnApp.tree.totalA, b: kilnApp.tree.totalB }));
		assert(d.diff && d.a === 710 && d.b === 710, JSON.stringify(d));
		const grew = await frameColor(page, await nodeOf(page, 'slow_path_[p]'));
		const shrank = await frameColor(page, await nodeOf(page, 'fast_path_[p]'));
		assert(grew[0] > grew[1] + 60 && grew[0] > grew[2] + 60, 'slow_path not red: ' + grew);
		assert(shrank[1] > shrank[0] + 40 && shrank[1] > shrank[2] + 40, 'fast_path not green: ' + shrank);
		const box2 = await page.locator('#flame').boundingBox();
		const p2 = await page.evaluate((i) => {
			const T = kilnApp.tree, w = document.getElementById('flame').clientWidth, s = w / T.w[0];
			return [T.off[i] * s + T.w[i] * s / 2, T.depth[i] * 18 + 9];
		}, await nodeOf(page, 'slow_path_[p]'));
		await page.mouse.move(box2.x + p2[0], box2.y + p2[1]);
		const dtip = await page.textContent('#tip');
		assert(/change: \+\d+\.\d+ percentage points/.test(dtip), 'diff tooltip: ' + dtip);
		assert(page.url().includes('mode=diff'), page.url());
		ok('the diff view colours slow_path red ' + JSON.stringify(grew) + ', fast_path green ' +
			JSON.stringify(shrank) + '; the tooltip gives the change');
		await page.screenshot({ path: path.join(ARTIFACTS, 'ui-diff.png') });
		const dhtml = await (await fetch(await page.evaluate(() => document.getElementById('dl-html').href))).text();
		assert(/KilnFlame/.test(dhtml) && /counts2/.test(dhtml), 'diff HTML download');
		ok('the diff view downloads as a standalone diff HTML page');

		/* diff of two label sets over one range: host-a (A) against host-b (B) */
		for (const [sel, v] of [['#a-filters select[data-label="host"]', 'host-a'], ['#b-filters select[data-label="host"]', 'host-b']])
			await page.selectOption(sel, v);
		await page.fill('#a-from', 'now-1h'); await page.fill('#a-until', 'now');
		await page.fill('#b-from', 'now-1h'); await page.fill('#b-until', 'now');
		await page.click('#diff-apply');
		await ready(page);
		const ls = await page.evaluate(() => [kilnApp.tree.totalA, kilnApp.tree.totalB]);
		assert.deepStrictEqual(ls, [810, 610]);
		await urlHas(page, 'a.host=host-a');
		ok('the diff view compares two label sets (host-a: 810 samples, host-b: 610)');

		/* the timeline: dragging selects a range */
		await page.click('#mode-single');
		await ready(page);
		const tb = await page.locator('#timeline').boundingBox();
		await page.mouse.move(tb.x + tb.width * 0.55, tb.y + 30);
		await page.mouse.down();
		await page.mouse.move(tb.x + tb.width * 0.95, tb.y + 30, { steps: 5 });
		await page.mouse.up();
		await ready(page);
		const range = await page.evaluate(() => [kilnApp.state.from, kilnApp.state.until]);
		assert(/^\d+$/.test(range[0]) && /^\d+$/.test(range[1]) && +range[1] - +range[0] > 600, range.join(' '));
		const late = await page.evaluate(() => kilnApp.tree.totalA);
		assert.strictEqual(late, 710, 'late window total ' + late);
		assert.strictEqual(await page.inputValue('#preset'), 'custom');
		ok('dragging on the timeline selects the late window (' + late + ' samples)');
		await page.screenshot({ path: path.join(ARTIFACTS, 'ui-timeline-range.png') });

		/* another service; its table counts a recursive function's total once per stack */
		await page.selectOption('#service', 'billing');
		await ready(page);
		assert(page.url().includes('service=billing'), page.url());
		await page.fill('#table-filter', 'walk');
		const walk = await page.$$eval('#functions tbody tr td', (tds) => tds.map((t) => t.textContent));
		assert.deepStrictEqual(walk.slice(0, 2), ['walk_[p]', '15 (6.52%)']);
		assert.strictEqual(walk[2], '15 (6.52%)', 'recursive total counted more than once: ' + walk);
		ok('switching to service billing; walk (recursive) has self 15 and total 15, not 35');

		/* a service with two profile types: one name in the service picker, both in the
		 * profile picker, values in the type's unit */
		const ingest = async (name, body) => {
			const r = await fetch(srv.url + 'ingest?name=' + encodeURIComponent(name) + '&from=' +
				L.minutesAgo(3) + '&until=' + L.minutesAgo(2), { method: 'POST', body });
			assert(r.ok, 'ingest ' + name + ': ' + r.status);
		};
		await ingest('cart.cpu', 'main;checkout 30\n');
		await ingest('cart.alloc_space', 'main;checkout;grow 3145728\nmain;idle 1048576\n');
		await page.goto(srv.url + '?service=cart.cpu');
		await ready(page);
		assert.strictEqual(await page.inputValue('#service'), 'cart');
		const svcs = await page.$$eval('#service option', (o) => o.map((x) => x.value));
		assert.deepStrictEqual(svcs, ['billing', 'cart', 'shop']);
		const types = await page.$$eval('#ptype option', (o) => o.map((x) => x.value + '=' + x.textContent));
		assert.deepStrictEqual(types, ['cart.cpu=process_cpu samples (count)',
			'cart.alloc_space=memory alloc_space (bytes)']);
		assert.strictEqual(await page.textContent('#legend .kf-note'), '30 samples');
		await page.selectOption('#ptype', 'cart.alloc_space');
		await ready(page);
		assert(page.url().includes('service=cart.alloc_space'), page.url());
		assert.strictEqual(await page.textContent('#legend .kf-note'), '4.0 MiB');
		assert.strictEqual(await page.evaluate(() => kilnApp.tree.totalA), 4194304);
		ok('service cart: one entry, its cpu and alloc_space types in the profile picker, 4.0 MiB');

		assert.deepStrictEqual(w.problems(), []);
		ok('no failed request, HTTP error or console error');
	} finally {
		if (browser) await browser.close();
		await srv.stop();
	}
	console.log(step + ' passed, 0 failed');
}

main().catch((e) => { console.log('not ok - ' + (e && e.stack || e)); process.exit(1); });
