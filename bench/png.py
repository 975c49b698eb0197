"""Grouped bar charts as PNG files, in pure Python (standard library only).

Why: the benchmark report draws its charts into docs/ -- ours vs. each peer
per benchmark suite, with the hardware ceiling as a dashed horizontal line --
and it has to run on the GPU machine and in CI, where matplotlib (and numpy)
are not installed.  So this module carries everything itself: an RGB canvas
kept in one bytearray, a 5x7 bitmap font for printable ASCII, a chart layout,
and a PNG encoder (IHDR/IDAT/IEND, zlib, CRC32) with a matching decoder for
the checks.

Public API: bar_chart(), render(), read_png(), write_png(), nice_scale(),
fmt_value().  `python3 bench/png.py out.png` draws a demo chart.
"""
import math
import numbers
import struct
import sys
import time
import zlib

# --------------------------------------------------------------------------
# Colours
# --------------------------------------------------------------------------
WHITE = (255, 255, 255)
TEXT = (25, 25, 25)
AXIS = (0, 0, 0)
GRID = (222, 222, 222)
NA_GREY = (140, 140, 140)
CEILING = (200, 20, 20)
# First entry is "ours": a strong colour; peers follow in softer tones.
PALETTE = [(0, 90, 220), (245, 150, 40), (70, 170, 95), (150, 105, 200),
           (140, 110, 85), (230, 120, 185), (40, 175, 190), (185, 185, 50)]

# --------------------------------------------------------------------------
# Font: 5x7 glyphs for ASCII 32..126 in code order.  Each glyph is 7 rows of
# two hex digits; bit 0x10 is the leftmost pixel of a row.
# --------------------------------------------------------------------------
FONT_W, FONT_H = 5, 7
_GLYPH_HEX = [
    "00000000000000 04040404040004 0a0a0000000000 0a0a1f0a1f0a0a",  #  ! " #
    "040f140e051e04 18190204081303 0c12140815120d 04040800000000",  # $ % & '
    "02040808080402 08040202020408 0004150e150400 0004041f040400",  # ( ) * +
    "000000000c0408 0000001f000000 00000000000c0c 00010204081000",  # , - . /
    "0e11131519110e 040c040404040e 0e11010204081f 1f02040201110e",  # 0 1 2 3
    "02060a121f0202 1f101e0101110e 0608101e11110e 1f010204080808",  # 4 5 6 7
    "0e11110e11110e 0e11110f01020c 000c0c000c0c00 000c0c000c0408",  # 8 9 : ;
    "02040810080402 00001f001f0000 08040201020408 0e110102040004",  # < = > ?
    "0e11010d15150e 0e11111f111111 1e11111e11111e 0e11101010110e",  # @ A B C
    "1c12111111121c 1f10101e10101f 1f10101e101010 0e11101711110f",  # D E F G
    "1111111f111111 0e04040404040e 0702020202120c 11121418141211",  # H I J K
    "1010101010101f 111b1515111111 11111915131111 0e11111111110e",  # L M N O
    "1e11111e101010 0e11111115120d 1e11111e141211 0f10100e01011e",  # P Q R S
    "1f040404040404 1111111111110e 11111111110a04 1111111515150a",  # T U V W
    "11110a040a1111 11110a04040404 1f01020408101f 0e08080808080e",  # X Y Z [
    "00100804020100 0e02020202020e 040a1100000000 0000000000001f",  # \ ] ^ _
    "08040200000000 00000e010f110f 1010161911111e 00000e1010110e",  # ` a b c
    "01010d1311110f 00000e111f100e 0609081c080808 00000f110f010e",  # d e f g
    "10101619111111 04000c0404040e 0200060202120c 10101214181412",  # h i j k
    "0c04040404040e 00001a15151111 00001619111111 00000e1111110e",  # l m n o
    "00001e111e1010 00000d130f0101 00001619101010 00000e100e011e",  # p q r s
    "08081c08080906 0000111111130d 00001111110a04 0000111115150a",  # t u v w
    "0000110a040a11 000011110f010e 00001f0204081f 02040408040402",  # x y z {
    "04040404040404 08040402040408 00000815020000",                 # | } ~
]
_BOX = (0x1f, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1f)  # for unknown characters


def _load_font():
    codes = " ".join(_GLYPH_HEX).split()
    if len(codes) != 95:
        raise AssertionError("font table must hold 95 glyphs, has %d" % len(codes))
    return {chr(32 + i): tuple(int(c[k:k + 2], 16) for k in range(0, 14, 2))
            for i, c in enumerate(codes)}


FONT = _load_font()


# --------------------------------------------------------------------------
# Canvas and text
# --------------------------------------------------------------------------
class Canvas:
    """An RGB image in one bytearray (3 bytes a pixel, rows top to bottom).
    Every drawing operation clips to the image."""

    def __init__(self, width, height, bg=WHITE):
        self.width, self.height = width, height
        self.buf = bytearray(bytes(bg) * (width * height))
        self.plot = None   # set by render(): the Plot box
        self.ymax = None   # set by render(): the top of the y axis

    def fill_rect(self, x0, y0, x1, y1, color):
        """Fill the pixels x0 <= x < x1, y0 <= y < y1."""
        x0, y0 = max(0, int(x0)), max(0, int(y0))
        x1, y1 = min(self.width, int(x1)), min(self.height, int(y1))
        if x0 >= x1 or y0 >= y1:
            return
        run = bytes(color) * (x1 - x0)
        stride = self.width * 3
        for y in range(y0, y1):
            off = y * stride + x0 * 3
            self.buf[off:off + len(run)] = run

    def pixel(self, x, y):
        off = (y * self.width + x) * 3
        return tuple(self.buf[off:off + 3])

    def row(self, y):
        stride = self.width * 3
        return self.buf[y * stride:(y + 1) * stride]


def text_size(s, scale=1):
    """(width, height) in pixels of s drawn at the given scale."""
    return max(0, len(s) * (FONT_W + 1) * scale - scale), FONT_H * scale


def draw_text(cv, x, y, s, color, scale=1):
    """Draw s with its top-left corner at (x, y); clipped to the image."""
    for ch in s:
        if x >= cv.width:
            break
        if x + FONT_W * scale > 0:
            for r, bits in enumerate(FONT.get(ch, _BOX)):
                for c in range(FONT_W):
                    if bits & (0x10 >> c):
                        px, py = x + c * scale, y + r * scale
                        cv.fill_rect(px, py, px + scale, py + scale, color)
        x += (FONT_W + 1) * scale


def draw_text_centered(cv, cx, y, s, color, scale=1):
    draw_text(cv, int(round(cx - text_size(s, scale)[0] / 2)), y, s, color, scale)


# --------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------
def nice_scale(vmax):
    """(ymax, step): ymax >= vmax, step = 1/2/2.5/5 x 10^k, 5..8 steps.
    A vmax of 0 (nothing to show) gives the axis 0..1."""
    if not vmax > 0:
        return 1.0, 0.2
    k = math.floor(math.log10(vmax)) - 1
    while True:
        for m in (1, 2, 2.5, 5):
            step = m * 10.0 ** k
            n = math.ceil(vmax / step - 1e-9)
            if n <= 8:
                return n * step, step
        k += 1


def fmt_value(v):
    """Compact label with about 3 significant digits: 512, 0.93, 12.3k."""
    r = float("%.3g" % v)
    for above, div, suffix in ((1e12, 1e12, "T"), (1e9, 1e9, "G"),
                               (1e6, 1e6, "M"), (1e4, 1e3, "k")):
        if abs(r) >= above:
            return "%.3g%s" % (r / div, suffix)
    if abs(r) >= 100:
        return "%.0f" % v
    return "%.3g" % v


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------
def _check_number(v, what):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ValueError("%s must be a number, got %r" % (what, v))
    if not math.isfinite(v) or v < 0:
        raise ValueError("%s must be finite and >= 0, got %r" % (what, v))


def _validate(groups, series, values, width, height, ceiling, colors):
    if not groups:
        raise ValueError("groups must be a non-empty list of category labels")
    if not series:
        raise ValueError("series must be a non-empty list of series names")
    if len(values) != len(series):
        raise ValueError("values has %d rows but there are %d series"
                         % (len(values), len(series)))
    for i, row in enumerate(values):
        if len(row) != len(groups):
            raise ValueError("values[%d] has %d entries but there are %d groups"
                             % (i, len(row), len(groups)))
        for j, v in enumerate(row):
            if v is not None:
                _check_number(v, "values[%d][%d]" % (i, j))
    for name, n in (("width", width), ("height", height)):
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise ValueError("%s must be a positive integer, got %r" % (name, n))
    if ceiling is not None:
        _check_number(ceiling, "ceiling")
    for c in colors or ():
        if len(c) != 3 or not all(isinstance(k, int) and 0 <= k <= 255 for k in c):
            raise ValueError("colors must be (r, g, b) tuples of 0..255, got %r" % (c,))


# --------------------------------------------------------------------------
# Chart
# --------------------------------------------------------------------------
class Plot:
    """The plot box: x in [left, right), y from top (ymax) to bottom (0,
    the x axis row)."""

    def __init__(self, left, top, right, bottom, ymax):
        self.left, self.top, self.right, self.bottom = left, top, right, bottom
        self.ymax = ymax

    def y_of(self, v):
        return self.bottom - int(round(v / self.ymax * (self.bottom - self.top)))


def _draw_header(cv, title, series, palette, ylabel, left):
    """Title, legend (below the title) and y label; returns the plot top."""
    scale = 2 if text_size(title, 2)[0] <= cv.width - 16 else 1
    tw, th = text_size(title, scale)
    draw_text(cv, max(4, (cv.width - tw) // 2), 8, title, TEXT, scale)
    y = 8 + th + 10
    x = left
    for name, color in zip(series, palette):
        w = 10 + 5 + text_size(name)[0]
        if x > left and x + w > cv.width - 8:
            x, y = left, y + 14
        cv.fill_rect(x, y, x + 10, y + 10, color)
        draw_text(cv, x + 15, y + 2, name, TEXT)
        x += w + 18
    y += 10 + 10
    draw_text(cv, 8, y, ylabel, TEXT)
    return y + FONT_H + 12


def _draw_grid(cv, plot, step, tick_labels):
    for i, label in enumerate(tick_labels):
        y = plot.y_of(i * step)
        if i > 0:
            cv.fill_rect(plot.left + 1, y, plot.right, y + 1, GRID)
        cv.fill_rect(plot.left - 4, y, plot.left, y + 1, AXIS)
        tw = text_size(label)[0]
        draw_text(cv, plot.left - 7 - tw, y - FONT_H // 2, label, TEXT)


def _bar_slots(plot, ngroups, nseries):
    """Yield (group, series, x0, x1) for every bar slot."""
    gw = (plot.right - plot.left) / ngroups
    bw = max(1, int(gw * 0.8 / nseries))
    gap = 1 if bw >= 4 else 0
    for j in range(ngroups):
        start = int(round(plot.left + gw * (j + 0.5) - bw * nseries / 2))
        for i in range(nseries):
            x0 = start + i * bw
            yield j, i, x0, x0 + bw - gap


def _draw_bars(cv, plot, values, palette, ngroups):
    """Draw the bars; returns the labels to print above them."""
    labels = []
    for j, i, x0, x1 in _bar_slots(plot, ngroups, len(values)):
        v, cx = values[i][j], (x0 + x1) / 2
        room = x1 - x0 + 4                    # a label wider than its bar would run into the next one
        if v is None:
            if text_size("n/a")[0] <= room:
                labels.append((cx, plot.bottom - FONT_H - 2, "n/a", NA_GREY))
            continue
        top = plot.y_of(v)
        if v > 0:
            top = min(top, plot.bottom - 1)   # a value > 0 shows at least 1 px
        cv.fill_rect(x0, top, x1, plot.bottom, palette[i])
        if text_size(fmt_value(v))[0] <= room:
            labels.append((cx, top - FONT_H - 2, fmt_value(v), TEXT))
    return labels


def _draw_ceiling(cv, plot, ceiling, label):
    y = plot.y_of(ceiling)
    for x in range(plot.left + 1, plot.right, 12):
        cv.fill_rect(x, y - 1, min(x + 8, plot.right), y + 1, CEILING)
    if label:
        tw = text_size(label)[0]
        x = plot.right - tw - 4
        cv.fill_rect(x - 2, y - FONT_H - 5, x + tw + 2, y - 2, WHITE)
        draw_text(cv, x, y - FONT_H - 4, label, CEILING)


def _draw_categories(cv, plot, groups):
    """Category labels under the groups; a label may have several lines ("\\n")."""
    gw = (plot.right - plot.left) / len(groups)
    for j, name in enumerate(groups):
        lines = name.split("\n")
        scale = 2 if all(text_size(l, 2)[0] <= gw - 4 for l in lines) and len(lines) == 1 else 1
        for k, line in enumerate(lines):
            draw_text_centered(cv, plot.left + gw * (j + 0.5), plot.bottom + 7 + k * (FONT_H + 3) * scale,
                               line, TEXT, scale)


def render(title, groups, series, values, ylabel, ceiling=None, ceiling_label=None,
           width=960, height=540, colors=None):
    """Draw the chart (see bar_chart) and return the Canvas; canvas.plot is
    the plot box and canvas.ymax the top of the y axis."""
    _validate(groups, series, values, width, height, ceiling, colors)
    groups, series = [str(g) for g in groups], [str(s) for s in series]
    base = [tuple(c) for c in colors] if colors else PALETTE
    palette = [base[i % len(base)] for i in range(len(series))]
    present = [v for row in values for v in row if v is not None]
    ymax, step = nice_scale(max(present + [ceiling or 0]))
    ticks = [fmt_value(i * step) for i in range(int(round(ymax / step)) + 1)]
    left = 8 + max(text_size(t)[0] for t in ticks) + 10
    cv = Canvas(width, height)
    top = _draw_header(cv, title, series, palette, str(ylabel), left)
    nlines = max(len(g.split("\n")) for g in groups)
    bottom = max(height - 30 - (nlines - 1) * (FONT_H + 3), top + 1)
    plot = Plot(left, top, max(width - 16, left + 1), bottom, ymax)
    cv.plot, cv.ymax = plot, ymax
    _draw_grid(cv, plot, step, ticks)
    labels = _draw_bars(cv, plot, values, palette, len(groups))
    cv.fill_rect(plot.left, plot.top, plot.left + 1, plot.bottom + 1, AXIS)
    cv.fill_rect(plot.left, plot.bottom, plot.right, plot.bottom + 1, AXIS)
    if ceiling is not None:
        _draw_ceiling(cv, plot, ceiling, ceiling_label)
    for cx, y, s, color in labels:
        draw_text_centered(cv, cx, y, s, color)
    _draw_categories(cv, plot, groups)
    return cv


def bar_chart(path, title, groups, series, values, ylabel, ceiling=None, ceiling_label=None,
              width=960, height=540, colors=None):
    """groups: list of category labels along x (e.g. ["J1","J2","J3","J4","D8k"]);
    series: list of series names (legend; e.g. ["Tile", "FlashAttention-4", "FA2 varlen"]);
    values: values[i][j] = value of series i in group j, a finite float >= 0, or None (no bar, and
    a small 'n/a' text at that slot is fine); ylabel: y axis label (e.g. "TFLOP/s");
    ceiling: optional float drawn as a dashed horizontal line across the plot with ceiling_label
    text near its right end. Writes an 8-bit RGB PNG (no alpha) to path. Returns None."""
    cv = render(title, groups, series, values, ylabel, ceiling, ceiling_label,
                width, height, colors)
    write_png(path, cv.width, cv.height, cv.buf)


# --------------------------------------------------------------------------
# PNG
# --------------------------------------------------------------------------
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(tag, data):
    crc = zlib.crc32(tag + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", crc)


def encode_png(width, height, rgb):
    """PNG bytes for an 8-bit RGB image (rows top to bottom, no padding)."""
    stride = width * 3
    if len(rgb) != stride * height:
        raise ValueError("pixel buffer has %d bytes, expected %d" % (len(rgb), stride * height))
    raw = b"".join(b"\x00" + rgb[y * stride:(y + 1) * stride] for y in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (PNG_SIGNATURE + _chunk(b"IHDR", ihdr)
            + _chunk(b"IDAT", zlib.compress(raw, 6)) + _chunk(b"IEND", b""))


def write_png(path, width, height, rgb):
    with open(path, "wb") as f:
        f.write(encode_png(width, height, rgb))


def _chunks(data):
    """Yield (tag, body) for each chunk after the signature, checking CRCs."""
    pos = 8
    while pos < len(data):
        if pos + 8 > len(data):
            raise ValueError("truncated PNG chunk header at byte %d" % pos)
        length, tag = struct.unpack(">I4s", data[pos:pos + 8])
        body, crc = data[pos + 8:pos + 8 + length], data[pos + 8 + length:pos + 12 + length]
        if len(body) != length or len(crc) != 4:
            raise ValueError("truncated PNG chunk %r" % tag)
        if zlib.crc32(tag + body) & 0xFFFFFFFF != struct.unpack(">I", crc)[0]:
            raise ValueError("bad CRC in PNG chunk %r" % tag)
        yield tag, body
        pos += 12 + length


def read_png(path):
    """Decode a PNG as written here (8-bit RGB, filter 0, no interlace).
    Returns (width, height, rows), rows a list of bytearrays of RGB."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != PNG_SIGNATURE:
        raise ValueError("%s: not a PNG (bad signature)" % path)
    size, idat, ended = None, [], False
    for tag, body in _chunks(data):
        if tag == b"IHDR":
            w, h, depth, ctype, comp, filt, interlace = struct.unpack(">IIBBBBB", body)
            if (depth, ctype, comp, filt, interlace) != (8, 2, 0, 0, 0):
                raise ValueError("unsupported PNG: bit depth %d, colour type %d, interlace %d"
                                 % (depth, ctype, interlace))
            size = (w, h)
        elif tag == b"IDAT":
            idat.append(body)
        elif tag == b"IEND":
            ended = True
            break
    if size is None or not ended:
        raise ValueError("%s: PNG lacks IHDR or IEND" % path)
    w, h = size
    try:
        raw = zlib.decompress(b"".join(idat))
    except zlib.error as e:
        raise ValueError("%s: bad IDAT data: %s" % (path, e))
    stride = 1 + 3 * w
    if len(raw) != h * stride:
        raise ValueError("%s: image data has %d bytes, expected %d" % (path, len(raw), h * stride))
    rows = []
    for y in range(h):
        if raw[y * stride] != 0:
            raise ValueError("%s: row %d uses filter %d (only 0 supported)"
                             % (path, y, raw[y * stride]))
        rows.append(bytearray(raw[y * stride + 1:(y + 1) * stride]))
    return w, h, rows


# --------------------------------------------------------------------------
# Demo
# --------------------------------------------------------------------------
def demo(path):
    """Draw a demo chart (made-up numbers) to path."""
    bar_chart(path, "Attention forward, BF16 (demo numbers)",
              ["J1", "J2", "J3", "J4", "D8k"],
              ["Tile", "FlashAttention-4", "FA2 varlen", "cuDNN", "Triton"],
              [[512, 601, 655, 702, 688],
               [498, 590, 662, 715, 701],
               [311, 402, 455, 470, None],
               [455, 530, 601, 640, 652],
               [0.93, 388, 420, 451, 447]],
              "TFLOP/s", ceiling=989, ceiling_label="H200 BF16 dense peak 989")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write("usage: python3 bench/png.py OUT.png\n")
        sys.exit(2)
    t0 = time.perf_counter()
    demo(sys.argv[1])
    print("wrote %s in %.3f s" % (sys.argv[1], time.perf_counter() - t0))
