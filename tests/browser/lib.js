/* Shared by the browser tests and bench/ui: a real `kiln serve` on a free loopback port
 * with a fresh data directory, uploads through its gProfiler API, and Debian's chromium
 * driven by playwright-core. */
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const ROOT = path.resolve(__dirname, '../..');
const KILN = process.env.KILN || path.join(ROOT, 'build/kiln');

/* Starts kiln serve on 127.0.0.1:0 (with args, e.g. tokens); resolves to {url, stop()}
 * once it prints its port. */
function startServer(args) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-ui-'));
	const proc = spawn(KILN, ['serve', '--listen', '127.0.0.1:0', '--data-dir', path.join(dir, 'data'),
		'--retention-days', '0', '-q'].concat(args || []), { stdio: ['ignore', 'pipe', 'inherit'] });
	return new Promise((resolve, reject) => {
		let out = '';
		const timer = setTimeout(() => reject(new Error('kiln serve printed no address: ' + out)), 20000);
		proc.on('exit', (code) => reject(new Error('kiln serve exited with ' + code + ': ' + out)));
		proc.stdout.on('data', (d) => {
			out += d;
			const m = /serving on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
			if (!m) return;
			clearTimeout(timer);
			resolve({
				url: m[1],
				pid: proc.pid,
				stop() {
					proc.removeAllListeners('exit');
					proc.kill('SIGTERM');
					return new Promise((r) => { proc.on('exit', r); setTimeout(r, 5000); })
						.then(() => fs.rmSync(dir, { recursive: true, force: true }));
				}
			});
		});
	});
}

/* Uploads .col text as gProfiler's agent does (POST /api/v2/profiles), with the write
 * token when given. */
async function upload(url, service, host, col, start, end, token) {
	const body = JSON.stringify({ profile: col, hostname: host, start_time: start, end_time: end,
		gpid: 0 });
	const r = await fetch(url + 'api/v2/profiles', { method: 'POST', body,
		headers: Object.assign({ 'Content-Type': 'application/json', 'GPROFILER-SERVICE-NAME': service },
			token ? { 'GPROFILER-API-KEY': token } : {}) });
	const text = await r.text();
	if (!r.ok) throw new Error('upload failed: ' + r.status + ' ' + text);
	return text;
}

/* Debian's chromium, headless, with a fresh profile (playwright's own temporary one). */
function launch() {
	return chromium.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			'--disable-background-networking', '--disable-component-update', '--disable-sync'],
	});
}

/* Records what a page must not do: failed requests, HTTP errors, console errors and
 * uncaught exceptions. problems() lists them. */
function watch(page) {
	const bad = [];
	page.on('requestfailed', (r) => bad.push('request failed: ' + r.url() + ' ' + (r.failure() || {}).errorText));
	page.on('response', (r) => { if (r.status() >= 400) bad.push('HTTP ' + r.status() + ': ' + r.url()); });
	page.on('console', (m) => { if (m.type() === 'error') bad.push('console error: ' + m.text()); });
	page.on('pageerror', (e) => bad.push('page error: ' + e.message));
	return { problems: () => bad.slice() };
}

/* CPU time (user + system) that process pid has used, in milliseconds. */
function cpuMs(pid) {
	const f = fs.readFileSync('/proc/' + pid + '/stat', 'utf8'), rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
	return (+rest[11] + +rest[12]) * 1000 / 100;	/* utime, stime in clock ticks (USER_HZ 100) */
}

/* A time in seconds, n minutes ago. */
function minutesAgo(n) { return Math.floor(Date.now() / 1000) - n * 60; }

module.exports = { ROOT, KILN, startServer, upload, launch, watch, minutesAgo, cpuMs };
