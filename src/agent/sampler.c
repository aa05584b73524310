#include "agent/sampler.h"

#include <errno.h>
#include <stdlib.h>

#include "agent/sample_source.h"
#include "agent/source_perf.h"
#include "util/log.h"
#include "util/strbuf.h"

/* Every source, by kind. */
static const struct sample_source_ops *const sources[SAMPLER_NR_KINDS] = {
	[SAMPLER_PERF] = &perf_source_ops,
};

struct sampler {
	const struct sample_source_ops *ops;
	void *src;
	bool eager_capable;	/* cfg.wake_per_sample */
	bool eager;
};

int sample_source__online_cpus(unsigned **out, unsigned *nr)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned *cpus = NULL, n = 0, alloc = 0;
	int ret = strbuf_read_file(&sb, "/sys/devices/system/cpu/online");
	char *p;

	if (ret < 0)
		goto out;
	p = sb.buf;
	while (*p && *p != '\n') {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;
		if (end == p) {
			ret = -EINVAL;
			goto out;
		}
		p = end;
		if (*p == '-')
			hi = strtoul(p + 1, &p, 10);
		for (unsigned long c = lo; c <= hi && c < 65536; c++) {
			if (n == alloc) {
				alloc = alloc ? alloc * 2 : 16;
				cpus = xrealloc(cpus, alloc * sizeof(*cpus));
			}
			cpus[n++] = (unsigned)c;
		}
		if (*p == ',')
			p++;
	}
	ret = n ? 0 : -ENODEV;
out:
	strbuf_release(&sb);
	if (ret < 0) {
		free(cpus);
		return ret;
	}
	*out = cpus;
	*nr = n;
	return 0;
}

/* What every source may rely on. */
static int check_config(const struct sampler_config *cfg, char *err, size_t errlen)
{
	if ((unsigned)cfg->kind >= SAMPLER_NR_KINDS || !sources[cfg->kind]) {
		struct strbuf known = STRBUF_INIT;
		for (unsigned i = 0; i < SAMPLER_NR_KINDS; i++)
			if (sources[i])
				strbuf_addf(&known, "%s%s", known.len ? ", " : "", sources[i]->name);
		errmsg(err, errlen, "unknown sample source kind %d (known: %s)", (int)cfg->kind,
		       known.buf);
		strbuf_release(&known);
		return -EINVAL;
	}
	if (!cfg->freq) {
		errmsg(err, errlen, "sampling frequency of 0 Hz for the %s source",
		       sources[cfg->kind]->name);
		return -EINVAL;
	}
	if (cfg->user_regs_stack && (!cfg->stack_size || cfg->stack_size % 8 ||
				     cfg->stack_size > SAMPLER_MAX_STACK_SIZE)) {
		errmsg(err, errlen, "user stack copy of %u bytes is not a multiple of 8 in 8..%u",
		       cfg->stack_size, SAMPLER_MAX_STACK_SIZE);
		return -EINVAL;
	}
	return 0;
}

int sampler__open(const struct sampler_config *cfg, struct sampler **out, char *err,
		  size_t errlen)
{
	struct sampler *s;
	int ret = check_config(cfg, err, errlen);

	if (ret < 0)
		return ret;
	s = xcalloc(1, sizeof(*s));
	s->ops = sources[cfg->kind];
	s->eager_capable = cfg->wake_per_sample;
	ret = s->ops->open(cfg, &s->src, err, errlen);
	if (ret < 0) {
		free(s);
		return ret;
	}
	*out = s;
	return 0;
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	s->ops->close(s->src);
	free(s);
}

int sampler__enable(struct sampler *s)
{
	return s->ops->enable(s->src, true);
}

int sampler__disable(struct sampler *s)
{
	return s->ops->enable(s->src, false);
}

int sampler__poll(struct sampler *s, int timeout_ms, const struct sampler_handlers *h)
{
	return s->ops->poll(s->src, timeout_ms, h);
}

int sampler__drain(struct sampler *s, const struct sampler_handlers *h)
{
	return s->ops->drain(s->src, h);
}

int sampler__set_eager(struct sampler *s, bool eager)
{
	int ret = 0;

	if (!s->eager_capable || s->eager == eager)
		return 0;
	if (s->ops->set_eager)
		ret = s->ops->set_eager(s->src, eager);
	if (ret == 0)
		s->eager = eager;
	return ret;
}

struct sampler_stats sampler__stats(const struct sampler *s)
{
	return s->ops->stats(s->src);
}

unsigned sampler__nr_cpus(const struct sampler *s)
{
	return s->ops->nr_cpus(s->src);
}

const char *sampler__kind_name(const struct sampler *s)
{
	return s->ops->name;
}
