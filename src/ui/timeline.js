/* kiln web UI: the timeline of sample totals above the flamegraph. Bars on a canvas, time
 * ticks below; dragging selects a range (onSelect(fromSeconds, untilSeconds)); shaded
 * bands show the ranges in view (a diff's A and B).
 *
 *   var tl = new KilnTimeline(canvas, {onSelect: fn, onHover: fn(text)});
 *   tl.set({startTime, samples, durationDelta}, [{from, until, color, label}]);  */
(function (global) {
	'use strict';

	var H = 84, AXIS = 16;

	function pad(n) { return n < 10 ? '0' + n : '' + n; }
	function fmtTime(t, withDate) {
		var d = new Date(t * 1000), hm = pad(d.getHours()) + ':' + pad(d.getMinutes());
		return withDate ? (d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' + hm : hm;
	}
	function fmtNum(n) { return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ','); }

	function Timeline(canvas, opts) {
		this.canvas = canvas;
		this.opts = opts || {};
		this.data = null;
		this.bands = [];
		this.drag = null;
		var self = this;
		canvas.addEventListener('mousedown', function (ev) {
			if (!self.data || ev.button !== 0) return;
			self.drag = { x0: self.x(ev), x1: self.x(ev) };
			ev.preventDefault();
		});
		global.addEventListener('mousemove', function (ev) {
			if (self.drag) { self.drag.x1 = self.x(ev); self.draw(); }
		});
		canvas.addEventListener('mousemove', function (ev) {
			if (!self.data || !self.opts.onHover) return;
			var t = self.timeAt(self.x(ev)), d = self.data, k = Math.floor((t - d.startTime) / d.durationDelta);
			if (k >= 0 && k < d.samples.length)
				self.opts.onHover(fmtTime(d.startTime + k * d.durationDelta, self.span() > 86400) +
					': ' + fmtNum(d.samples[k]) + ' samples');
		});
		canvas.addEventListener('mouseleave', function () {
			if (self.opts.onHover) self.opts.onHover('');
		});
		global.addEventListener('mouseup', function () {
			var d = self.drag;
			if (!d) return;
			self.drag = null;
			self.draw();
			if (Math.abs(d.x1 - d.x0) < 4) return;
			var a = Math.round(self.timeAt(Math.min(d.x0, d.x1)));
			var b = Math.round(self.timeAt(Math.max(d.x0, d.x1)));
			if (b > a && self.opts.onSelect) self.opts.onSelect(a, b);
		});
		global.addEventListener('resize', function () { self.draw(); });
	}

	Timeline.prototype.x = function (ev) {
		var r = this.canvas.getBoundingClientRect();
		return Math.max(0, Math.min(r.width, ev.clientX - r.left));
	};
	Timeline.prototype.span = function () {
		var d = this.data;
		return d ? Math.max(1, d.samples.length * d.durationDelta) : 1;
	};
	Timeline.prototype.timeAt = function (x) {
		var w = this.canvas.clientWidth || 1;
		return this.data.startTime + (x / w) * this.span();
	};
	Timeline.prototype.xAt = function (t) {
		return (t - this.data.startTime) / this.span() * (this.canvas.clientWidth || 1);
	};

	/* tl: the server's timeline object; bands: ranges to shade. */
	Timeline.prototype.set = function (tl, bands) {
		this.data = tl && tl.samples && tl.durationDelta > 0 ? tl : null;
		this.bands = bands || [];
		this.draw();
	};

	Timeline.prototype.draw = function () {
		var c = this.canvas, w = c.clientWidth || 600, dpr = global.devicePixelRatio || 1;
		c.width = Math.round(w * dpr); c.height = Math.round(H * dpr);
		var ctx = c.getContext('2d');
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.fillStyle = '#fafbfd'; ctx.fillRect(0, 0, w, H);
		ctx.font = '11px system-ui, "DejaVu Sans", sans-serif';
		ctx.textBaseline = 'top';
		var d = this.data, plotH = H - AXIS, i;
		if (!d || !d.samples.length) {
			ctx.fillStyle = '#4a4a4a';
			ctx.fillText('no samples in this range', 8, plotH / 2 - 6);
			return;
		}
		var max = 0;
		for (i = 0; i < d.samples.length; i++) if (d.samples[i] > max) max = d.samples[i];
		for (i = 0; i < this.bands.length; i++) {
			var b = this.bands[i], x0 = Math.max(0, this.xAt(b.from)), x1 = Math.min(w, this.xAt(b.until));
			if (x1 <= x0) continue;
			ctx.fillStyle = b.color; ctx.fillRect(x0, 0, x1 - x0, plotH);
			if (b.label) { ctx.fillStyle = '#111'; ctx.fillText(b.label, x0 + 3, 2); }
		}
		var bw = w / d.samples.length;
		ctx.fillStyle = '#3a62c4';
		for (i = 0; i < d.samples.length; i++) {
			if (!d.samples[i]) continue;
			var h = Math.max(1, (plotH - 14) * d.samples[i] / (max || 1));
			ctx.fillRect(i * bw, plotH - h, Math.max(1, bw - (bw > 3 ? 1 : 0)), h);
		}
		ctx.strokeStyle = '#777'; ctx.lineWidth = 1;
		ctx.beginPath(); ctx.moveTo(0, plotH + 0.5); ctx.lineTo(w, plotH + 0.5); ctx.stroke();
		/* ticks at about every 110 px, labels in local time */
		var n = Math.max(2, Math.floor(w / 110)), withDate = this.span() > 86400;
		ctx.fillStyle = '#333';
		for (i = 0; i <= n; i++) {
			var tx = i * w / n, label = fmtTime(this.timeAt(tx), withDate);
			var lw = ctx.measureText(label).width;
			ctx.fillRect(Math.min(tx, w - 1), plotH, 1, 4);
			ctx.fillText(label, Math.max(0, Math.min(w - lw, tx - lw / 2)), plotH + 4);
		}
		ctx.textAlign = 'right';
		ctx.fillText('max ' + fmtNum(max), w - 4, 2);
		ctx.textAlign = 'left';
		if (this.drag) {
			var a = Math.min(this.drag.x0, this.drag.x1), z = Math.abs(this.drag.x1 - this.drag.x0);
			ctx.fillStyle = 'rgba(31,63,143,0.25)'; ctx.fillRect(a, 0, z, plotH);
			ctx.strokeStyle = '#1f3f8f'; ctx.strokeRect(a + 0.5, 0.5, z, plotH - 1);
		}
	};

	global.KilnTimeline = Timeline;
	global.KilnTimeline.fmtTime = fmtTime;
})(window);
