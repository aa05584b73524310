#!/usr/bin/env bash
# `kiln report` writes a self-contained flamegraph page that a real browser (headless
# chromium, no network) renders without errors; clicking zooms, Escape resets, search
# highlights and reports the matched share, the tooltip shows self and total; a page of
# 100,000 unique stacks renders too (its time is printed, not asserted).
. "$(dirname "$0")/../lib.sh"
command -v chromium >/dev/null || skip "chromium is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"

browse() {	# browse OUT ARGS... — runs headless chromium on a file:// page
	local out=$1; shift
	rm -rf "$T/profile"
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --user-data-dir="$T/profile" \
		--window-size=1200,800 "$@" >"$out" 2>"$T/chromium.err"
}

cat >"$T/app.col" <<'EOF'
# {"hostname": "box1", "frequency": 11}
0;;python3;main;Py_RunMain;<module> (app.py:40)_[p];handle (app.py:12)_[p];compress;deflate 300
0;;python3;main;Py_RunMain;<module> (app.py:40)_[p];handle (app.py:12)_[p];json_dumps (app.py:20)_[p] 120
0;;python3;main;Py_RunMain;<module> (app.py:40)_[p];write;do_syscall_64_[k];vfs_write_[k] 80
0;c1;java;start_thread;java/lang/Thread.run_[j];com/acme/Codec.encode_[i] 250
0;;goapp;runtime.goexit;main.main;main.alpha 200
0;;goapp;runtime.goexit;main.main;main.beta;deflate 50
0;;</script><script>document.title='pwned'</script>;x 1
EOF
"$KILN" report "$T/app.col" -o "$T/app.html" --title "app <test>" || fail "report failed"
# self-contained: nothing to fetch
if grep -Eq 'https?://|<link|src=' "$T/app.html"; then fail "page refers to something outside itself"; fi
[ "$(grep -c '</script>' "$T/app.html")" -eq 3 ] || fail "a frame name closed a script element"

# The page as written renders: the boot script marks the root element after drawing.
browse "$T/dom.html" --dump-dom "file://$T/app.html"
grep -q 'data-kiln-error="' "$T/dom.html" && fail "renderer error: $(grep -o 'data-kiln-error="[^"]*"' "$T/dom.html")"
drawn=$(grep -o 'data-kiln-rendered="[0-9]*"' "$T/dom.html" | grep -o '[0-9]*')
[ -n "$drawn" ] && [ "$drawn" -gt 10 ] || fail "page did not render (drawn='$drawn')"
grep -q '<title>app &lt;test&gt;</title>' "$T/dom.html" || fail "title was changed by a frame name"

# Interaction, driven through real DOM events on the canvas in the same browser.
sed 's|</body>|<script src="check.js"></script></body>|' "$T/app.html" >"$T/check.html"
cat >"$T/check.js" <<'EOF'
(function () {
	var v = window.kilnView, c = document.querySelector('canvas'), out = [];
	function at(i, type, extra) {
		var r = v.rectOf(i), b = c.getBoundingClientRect(), e = { bubbles: true,
			clientX: b.left + r.x + r.w / 2, clientY: b.top + r.y + r.h / 2 };
		for (var k in extra || {}) e[k] = extra[k];
		c.dispatchEvent(new MouseEvent(type, e));
	}
	var py = v.find('python3'), idx = v.find('handle (app.py:12)_[p]');
	at(idx, 'mousemove');
	var tip = document.querySelector('.kf-tip');
	out.push('tip=' + (!tip.hidden && /total: 420 samples/.test(tip.textContent) &&
		/self: 0 samples/.test(tip.textContent)));
	at(py, 'click');
	out.push('zoom=' + (v.zoomNode === py));
	out.push('zoomwidth=' + (Math.abs(v.rectOf(py).w - c.clientWidth) < 1));
	c.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
	out.push('reset=' + (v.zoomNode === 0));
	c.focus();
	c.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown', bubbles: true }));
	out.push('keys=' + (v.selected > 0));
	var s = document.querySelector('.kf-search');
	s.value = 'deflate';
	s.dispatchEvent(new Event('input'));
	out.push('found=' + document.querySelector('.kf-found').textContent);
	var r = KilnFlame.search(v.tree, '/^main\\.(alpha|beta)$/');
	out.push('regex=' + r.a);
	document.documentElement.setAttribute('data-check', out.join(';'));
})();
EOF
browse "$T/checked.html" --dump-dom "file://$T/check.html"
check=$(grep -o 'data-check="[^"]*"' "$T/checked.html")
echo "$check"
for want in 'tip=true' 'zoom=true' 'zoomwidth=true' 'reset=true' 'keys=true' 'regex=250'; do
	[[ "$check" == *"$want"* ]] || fail "interaction check '$want' not met: $check"
done
# deflate is under python (300) and under main.beta (50): 350 of 1001 samples
[[ "$check" == *"found=matched: 350 samples (34.97%)"* ]] || fail "search share wrong: $check"

# A differential page renders in diff mode.
sed -e 's/ 300$/ 900/' -e '/main.alpha/d' "$T/app.col" >"$T/app2.col"
"$KILN" report --diff "$T/app.col" "$T/app2.col" -o "$T/diff.html" || fail "diff report failed"
browse "$T/diff.dom" --dump-dom "file://$T/diff.html"
grep -q 'data-kiln-rendered="[1-9]' "$T/diff.dom" || fail "diff page did not render"
grep -q 'grew in B' "$T/diff.dom" || fail "diff page has no diff legend"

# 100,000 unique stacks: built once, only visible frames drawn.
python3 - "$T/big.col" <<'EOF'
import random, sys
random.seed(7)
seen, out = set(), []
while len(seen) < 100000:
    st = ["0", "", "proc%d" % random.randint(0, 9)] + \
         ["f%d" % random.randint(0, 2999) + random.choice(["", "_[k]", "_[p]", "_[j]"])
          for _ in range(random.randint(4, 30))]
    k = ";".join(st)
    if k not in seen:
        seen.add(k)
        out.append("%s %d" % (k, random.randint(1, 100)))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
EOF
"$KILN" report "$T/big.col" -o "$T/big.html" || fail "report of 100,000 stacks failed"
browse "$T/big.dom" --dump-dom "file://$T/big.html"
grep -q 'data-kiln-rendered="[1-9]' "$T/big.dom" || fail "100,000-stack page did not render"
echo "100,000 unique stacks: page $(stat -c %s "$T/big.html") bytes," \
	"parsed, built and drawn in $(grep -o 'data-kiln-ms="[0-9]*"' "$T/big.dom" | grep -o '[0-9]*') ms"
pass
