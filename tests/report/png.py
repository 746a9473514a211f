"""Decodes a PNG into rows of pixel tuples, in pure Python (zlib and the
five filter types), so the browser test needs no imaging library.

Handles what Chromium's Page.captureScreenshot writes: 8-bit RGB or RGBA,
not interlaced (and 8-bit grey, grey+alpha for completeness).
"""

import struct
import zlib

_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # colour type -> samples per pixel


def decode(data):
    """(width, height, channels, rows): rows is a list of bytes objects,
    each width * channels long, unfiltered."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if hdr is None:
        raise ValueError("PNG without IHDR")
    width, height, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in _CHANNELS or interlace:
        raise ValueError("unsupported PNG: depth %d, colour type %d, "
                         "interlace %d" % (depth, ctype, interlace))
    ch = _CHANNELS[ctype]
    raw = zlib.decompress(b"".join(idat))
    stride = width * ch
    rows, prev = [], bytearray(stride)
    for y in range(height):
        off = y * (stride + 1)
        ftype = raw[off]
        line = bytearray(raw[off + 1:off + 1 + stride])
        _unfilter(ftype, line, prev, ch)
        rows.append(bytes(line))
        prev = line
    return width, height, ch, rows


def _unfilter(ftype, line, prev, bpp):
    n = len(line)
    if ftype == 0:
        return
    if ftype == 1:  # Sub
        for i in range(bpp, n):
            line[i] = (line[i] + line[i - bpp]) & 0xFF
    elif ftype == 2:  # Up
        for i in range(n):
            line[i] = (line[i] + prev[i]) & 0xFF
    elif ftype == 3:  # Average
        for i in range(n):
            left = line[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
    elif ftype == 4:  # Paeth
        for i in range(n):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            if pa <= pb and pa <= pc:
                pred = a
            elif pb <= pc:
                pred = b
            else:
                pred = c
            line[i] = (line[i] + pred) & 0xFF
    else:
        raise ValueError("bad PNG filter type %d" % ftype)


def pixels(width, height, ch, rows, box=None):
    """The (r, g, b) of every pixel in box (x0, y0, x1, y1), all if None;
    alpha is dropped (the screenshot is opaque)."""
    x0, y0, x1, y1 = box or (0, 0, width, height)
    x0, y0 = max(0, int(x0)), max(0, int(y0))
    x1, y1 = min(width, int(x1)), min(height, int(y1))
    out = []
    for y in range(y0, y1):
        row = rows[y]
        for x in range(x0, x1):
            i = x * ch
            if ch >= 3:
                out.append((row[i], row[i + 1], row[i + 2]))
            else:
                out.append((row[i],) * 3)
    return out
