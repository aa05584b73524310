/* The web UI against a server with tokens: the page asks for a token instead of showing
 * data or failing, a write token (or a wrong one) is refused and asked again, a read token
 * shows the flamegraph and is kept for the tab's session (a reload does not ask again, a
 * new session does), and the downloads work with it although a link cannot send a header.
 * Prints "ok - ..." per check; exits non-zero on the first failure. */
'use strict';
const assert = require('assert');
const path = require('path');
const L = require('./lib.js');

const ARTIFACTS = process.env.ARTIFACTS || path.join(L.ROOT, 'build/artifacts');
let step = 0;
function ok(what) { console.log('ok ' + (++step) + ' - ' + what); }

const COL = '# {"hostname": "h1", "sampling_frequency": 99}\n' +
	'0;;python3;main_[p];secret_path_[p] 30\n0;;python3;main_[p];other_[p] 10\n';

async function state(page, want) {
	await page.waitForSelector('body[data-state="' + want + '"]', { timeout: 15000 });
}

/* The problems of a page other than the 401/403 answers the token form is about. */
function unexpected(w) {
	return w.problems().filter((p) => !/^HTTP 40[13]: /.test(p) &&
		!/status of 40[13]/.test(p));
}

async function main() {
	const srv = await L.startServer(['--token', 'w-secret', '--read-token', 'r-secret']);
	let browser;
	try {
		await L.upload(srv.url, 'shop', 'h1', COL, L.minutesAgo(10), L.minutesAgo(9), 'w-secret');
		let r = await fetch(srv.url + 'api/apps');
		assert.strictEqual(r.status, 401, 'apps without a token');
		ok('the server refuses /api/apps without a token');

		browser = await L.launch();
		const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
		const page = await ctx.newPage();
		const w = L.watch(page);
		await page.goto(srv.url + '?service=shop');
		await state(page, 'auth');
		assert(await page.isVisible('#auth'), 'no token form');
		assert(/needs a token/.test(await page.textContent('#auth-msg')));
		assert(await page.isHidden('#error'), 'an error shown beside the form: ' + await page.textContent('#error'));
		assert(!/secret_path/.test(await page.content()), 'data on the page without a token');
		await page.screenshot({ path: path.join(ARTIFACTS, 'ui-auth.png') });
		ok('the page asks for a token and shows no data');

		for (const bad of ['nope', 'w-secret']) {
			await page.fill('#auth-token', bad);
			await Promise.all([page.waitForNavigation(), page.click('#auth button[type="submit"]')]);
			await state(page, 'auth');
			assert(/refused/.test(await page.textContent('#auth-msg')), bad + ': ' + await page.textContent('#auth-msg'));
			assert.strictEqual(await page.evaluate(() => sessionStorage.getItem('kiln.token')), null, bad + ' kept');
		}
		ok('a wrong token and a write token are refused, asked again and not kept');

		await page.fill('#auth-token', 'r-secret');
		await Promise.all([page.waitForNavigation(), page.click('#auth button[type="submit"]')]);
		await state(page, 'ready');
		assert(await page.isHidden('#auth'), 'form still shown');
		const total = await page.evaluate(() => kilnApp.tree.totalA);
		assert.strictEqual(total, 40, 'total ' + total);
		assert.strictEqual(await page.evaluate(() => sessionStorage.getItem('kiln.token')), 'r-secret');
		ok('the read token shows the flamegraph (' + total + ' samples) and is kept in sessionStorage');

		await page.reload();
		await state(page, 'ready');
		ok('a reload keeps the session\'s token: no question');

		const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 10000 }), page.click('#dl-col')]);
		const file = await dl.path();
		const text = require('fs').readFileSync(file, 'utf8');
		assert(/main_\[p\];secret_path_\[p\] 30/.test(text), 'download: ' + text.slice(0, 200));
		ok('the .col download is fetched with the token');
		assert.deepStrictEqual(unexpected(w), [], 'problems: ' + unexpected(w).join('; '));
		ok('no failed request or console error other than the 401/403s');

		const ctx2 = await browser.newContext();
		const page2 = await ctx2.newPage();
		await page2.goto(srv.url + '?service=shop');
		await state(page2, 'auth');
		await ctx2.close();
		ok('a new session asks again');
	} finally {
		if (browser) await browser.close();
		await srv.stop();
	}
}

main().catch((e) => { console.error('not ok - ' + (e && e.stack || e)); process.exit(1); });
