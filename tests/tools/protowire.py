"""Protocol buffers written by hand for the server tests: enough to build a push.proto
PushRequest, a pprof or an OTLP request with a chosen defect in it. Import it with
PYTHONPATH=$ROOT/tests/tools."""


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7f
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, data):
    """A length-delimited field (wire type 2); str data is UTF-8."""
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


def vfield(num, n):
    """A varint field (wire type 0)."""
    return varint(num << 3) + varint(n)


def label(k, v):
    """push.proto's repeated LabelPair labels = 1 of a RawProfileSeries."""
    return field(1, field(1, k) + field(2, v))
