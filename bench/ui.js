/* bench/ui: the web UI on a profile of 100,000 unique stacks, in Debian's chromium.
 * Prints the time from navigation to a drawn flamegraph (target < 1 s) and the time one
 * zoom takes to lay out and draw (the frame's work; target < 16 ms), with the server
 * truncating to its default maxNodes and with every node sent (maxNodes=1048576). */
'use strict';
const zlib = require('zlib');
const L = require('../tests/browser/lib.js');

const STACKS = +(process.env.STACKS || 100000), RUNS = 3, ZOOMS = 40;

/* Stack i: a few shared frames, then one frame per decimal digit of i whose name depends
 * on the digits before it (so the tree has ~111,000 distinct nodes and names), and a leaf. */
function profile() {
	const lines = ['# {"hostname": "bench", "sampling_frequency": 99}'];
	const rt = ['', '_[p]', '_[j]', '', '_[k]'];
	for (let i = 0; i < STACKS; i++) {
		const digits = String(i).padStart(5, '0'), f = ['0', '', 'benchd', 'main', 'run_loop'];
		for (let d = 1; d <= digits.length; d++)
			f.push('layer' + d + '::fn_' + digits.slice(0, d) + rt[d - 1]);
		f.push('leaf_' + (i % 997));
		lines.push(f.join(';') + ' ' + (1 + (i * 7919) % 50));
	}
	return lines.join('\n') + '\n';
}

function median(v) { const s = v.slice().sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; }
function f1(x) { return x.toFixed(1); }

/* Main-thread CPU time of the page's renderer, ms (CDP Performance metrics). */
async function threadMs(cdp) {
	const m = (await cdp.send('Performance.getMetrics')).metrics;
	return 1000 * m.find((x) => x.name === 'ThreadTime').value;
}

async function measure(browser, srv, url, label) {
	const wall = [], api = [], build = [], cpuPage = [], cpuServer = [], cache = [];
	let zoomWall = [], zoomCpu = [], nodes = 0, frames = 0;
	for (let r = 0; r < RUNS; r++) {
		const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
		const page = await ctx.newPage();
		const cdp = await ctx.newCDPSession(page);
		await cdp.send('Performance.enable');
		const w = L.watch(page), s0 = L.cpuMs(srv.pid);
		/* whether the server answered the flamegraph from its cache (X-Kiln-Cache) */
		page.on('response', (resp) => {
			if (/\/pyroscope\/render\?/.test(resp.url())) cache.push(resp.headers()['x-kiln-cache'] || '?');
		});
		/* wait for the page's own 'kiln:ready' event: polling from the test would use the
		 * page's main thread too and inflate its CPU time */
		await page.goto(url, { waitUntil: 'domcontentloaded' });
		await page.evaluate(() => new Promise((resolve) => {
			if (kilnApp.ready) resolve(); else document.addEventListener('kiln:ready', resolve, { once: true });
		}));
		cpuServer.push(L.cpuMs(srv.pid) - s0);
		cpuPage.push(await threadMs(cdp));
		const m = await page.evaluate(() => {
			const calls = performance.getEntriesByType('resource').filter((e) => /\/(api|pyroscope)\//.test(e.name));
			return { ready: kilnApp.readyAt, api: Math.max.apply(null, calls.map((e) => e.responseEnd)) -
				Math.min.apply(null, calls.map((e) => e.startTime)), build: kilnApp.drawMs, nodes: kilnApp.tree.n,
				frames: +document.getElementById('flame').getAttribute('data-kiln-frames') };
		});
		if (w.problems().length) throw new Error(w.problems().join('\n'));
		wall.push(m.ready); api.push(m.api); build.push(m.build);
		nodes = m.nodes; frames = m.frames;
		if (r === RUNS - 1) {
			const shots = require('path').join(L.ROOT, 'build/artifacts');
			require('fs').mkdirSync(shots, { recursive: true });
			await page.screenshot({ path: require('path').join(shots, 'ui-bench-' + nodes + '-nodes.png') });
			/* zoom into frames spread over the tree and back out, timing each layout + draw */
			const pick = await page.evaluate((n) => {
				const T = kilnApp.tree, v = [];
				for (let i = 1; i < T.n && v.length < n; i += Math.max(1, Math.floor(T.n / n))) v.push(i);
				return v;
			}, ZOOMS);
			for (const i of pick.concat([0])) {
				const c0 = await threadMs(cdp);
				const t = await page.evaluate((i) => {
					const t0 = performance.now();
					kilnApp.view.zoom(i);
					return performance.now() - t0;
				}, i);
				zoomCpu.push(await threadMs(cdp) - c0);
				zoomWall.push(t);
			}
		}
		await ctx.close();
	}
	const zs = zoomWall.slice().sort((a, b) => a - b), zc = zoomCpu.slice().sort((a, b) => a - b);
	console.log(label + ': ' + nodes + ' nodes, ' + frames + ' frames drawn at 1440x900');
	console.log('  navigation to drawn flamegraph: median ' + f1(median(wall)) + ' ms wall (runs ' +
		wall.map(f1).join(', ') + '; API calls ' + f1(median(api)) + ' ms, tree + table + first draw ' +
		f1(median(build)) + ' ms; server cache per run: ' + cache.join(', ') + ')   [target < 1000 ms]');
	console.log('    CPU: page main thread ' + f1(median(cpuPage)) + ' ms, kiln serve ' + f1(median(cpuServer)) + ' ms');
	console.log('  zoom (layout + draw), ' + zs.length + ' zooms: wall median ' + f1(median(zs)) + ' ms, p95 ' +
		f1(zs[Math.floor(zs.length * 0.95)]) + ', max ' + f1(zs[zs.length - 1]) + '; main-thread CPU median ' +
		f1(median(zc)) + ' ms, p95 ' + f1(zc[Math.floor(zc.length * 0.95)]) + ', max ' + f1(zc[zc.length - 1]) +
		'   [target < 16 ms]');
}

async function main() {
	const srv = await L.startServer();
	let browser;
	try {
		const now = Math.floor(Date.now() / 1000), col = profile();
		const body = zlib.gzipSync(JSON.stringify({ profile: col, hostname: 'bench',
			start_time: now - 120, end_time: now - 60 }));
		const r = await fetch(srv.url + 'api/v2/profiles', { method: 'POST', body,
			headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip',
				'GPROFILER-SERVICE-NAME': 'bench' } });
		if (!r.ok) throw new Error('upload failed: ' + r.status + ' ' + await r.text());
		console.log('bench/ui: ' + STACKS + ' unique stacks uploaded (' + (col.length >> 20) +
			' MiB of .col), Debian chromium headless; load average ' +
			require('os').loadavg()[0].toFixed(1) + ' on ' + require('os').cpus().length + ' cores');
		browser = await L.launch();
		await measure(browser, srv, srv.url + '?service=bench&from=now-1h&until=now', 'server default maxNodes');
		await measure(browser, srv, srv.url + '?service=bench&from=now-1h&until=now&maxNodes=1048576', 'all nodes (maxNodes=1048576)');
	} finally {
		if (browser) await browser.close();
		await srv.stop();
	}
}

main().catch((e) => { console.error('bench/ui: ' + (e && e.stack || e)); process.exit(1); });
