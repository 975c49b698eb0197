"""Tests for bench/png.py: the stdlib-only PNG bar-chart renderer.

Run from the repository root:  python3 -m unittest discover -s tests/bench
"""
import math
import os
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.normpath(os.path.join(HERE, "..", "..", "bench"))
sys.path.insert(0, BENCH)
import png  # noqa: E402  (bench/png.py)


def columns_with(cv, color, y0, y1, x0=0, x1=None):
    """Set of x in [x0, x1) having `color` on some row in [y0, y1)."""
    x1 = cv.width if x1 is None else x1
    return {x for y in range(y0, y1) for x in range(x0, x1) if cv.pixel(x, y) == color}


def rows_with(cv, color, x0, x1):
    """Set of y having `color` on some column in [x0, x1)."""
    return {y for y in range(cv.height) for x in range(x0, x1) if cv.pixel(x, y) == color}


def count_in_row(cv, y, color):
    row = cv.row(y)
    return sum(1 for x in range(cv.width) if tuple(row[3 * x:3 * x + 3]) == color)


class TmpDir(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)


class PngFileTest(TmpDir):
    def write_chart(self, width=320, height=200):
        p = self.path("c.png")
        png.bar_chart(p, "T", ["a", "b"], ["s"], [[1.0, 2.0]], "y",
                      width=width, height=height)
        return p

    def test_structure(self):
        w, h = 321, 203
        with open(self.write_chart(w, h), "rb") as f:
            data = f.read()
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
        pos, tags, idat = 8, [], b""
        while pos < len(data):
            length, tag = struct.unpack(">I4s", data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + length]
            (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
            self.assertEqual(crc, zlib.crc32(tag + body) & 0xFFFFFFFF, tag)
            tags.append(tag)
            if tag == b"IHDR":
                self.assertEqual(struct.unpack(">IIBBBBB", body), (w, h, 8, 2, 0, 0, 0))
            if tag == b"IDAT":
                idat += body
            pos += 12 + length
        self.assertEqual(pos, len(data))
        self.assertEqual(tags[0], b"IHDR")
        self.assertEqual(tags[-1], b"IEND")
        self.assertEqual(set(tags[1:-1]), {b"IDAT"})
        raw = zlib.decompress(idat)
        self.assertEqual(len(raw), h * (1 + 3 * w))
        self.assertEqual({raw[y * (1 + 3 * w)] for y in range(h)}, {0})

    def test_round_trip(self):
        cv = png.Canvas(3, 2)
        cv.fill_rect(0, 0, 1, 1, (1, 2, 3))
        cv.fill_rect(2, 1, 3, 2, (250, 0, 7))
        p = self.path("t.png")
        png.write_png(p, 3, 2, cv.buf)
        w, h, rows = png.read_png(p)
        self.assertEqual((w, h), (3, 2))
        self.assertEqual(rows[0], bytearray([1, 2, 3] + [255] * 6))
        self.assertEqual(rows[1], bytearray([255] * 6 + [250, 0, 7]))
        self.assertIsInstance(rows[0], bytearray)

    def test_chart_file_matches_canvas(self):
        args = ("T", ["a", "b"], ["s", "t"], [[1, None], [3, 4]], "y")
        p = self.path("c.png")
        png.bar_chart(p, *args, width=200, height=120)
        cv = png.render(*args, width=200, height=120)
        w, h, rows = png.read_png(p)
        self.assertEqual((w, h), (200, 120))
        self.assertEqual(b"".join(rows), bytes(cv.buf))

    def test_corruption_rejected(self):
        p = self.write_chart()
        with open(p, "rb") as f:
            data = bytearray(f.read())
        bad = self.path("bad.png")
        data[40] ^= 0xFF                      # inside the IDAT data
        with open(bad, "wb") as f:
            f.write(data)
        with self.assertRaisesRegex(ValueError, "CRC"):
            png.read_png(bad)
        with open(bad, "wb") as f:
            f.write(b"GIF89a" + bytes(data[6:]))
        with self.assertRaisesRegex(ValueError, "signature"):
            png.read_png(bad)

    def test_unsupported_format_rejected(self):
        def chunk(tag, body):
            return (struct.pack(">I", len(body)) + tag + body
                    + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF))
        gray = (png.PNG_SIGNATURE
                + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(b"\x00\x80")) + chunk(b"IEND", b""))
        filt = (png.PNG_SIGNATURE
                + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(b"\x01\x00\x00\x00")) + chunk(b"IEND", b""))
        for name, data in (("gray", gray), ("filter", filt)):
            p = self.path(name + ".png")
            with open(p, "wb") as f:
                f.write(data)
            with self.subTest(name), self.assertRaises(ValueError):
                png.read_png(p)

    def test_demo_main(self):
        p = self.path("demo.png")
        subprocess.run([sys.executable, os.path.join(BENCH, "png.py"), p],
                       check=True, stdout=subprocess.DEVNULL)
        w, h, rows = png.read_png(p)
        self.assertEqual((w, h), (960, 540))
        self.assertIn(bytes(png.PALETTE[0]), b"".join(rows))


class ChartPixelTest(unittest.TestCase):
    def test_plot_box_is_drawn(self):
        cv = png.render("T", ["a"], ["s"], [[50]], "y", width=300, height=200)
        p = cv.plot
        self.assertGreater(count_in_row(cv, p.bottom, png.AXIS), (p.right - p.left) * 0.9)
        # the top gridline (y = ymax) runs across the plot, under the bar that reaches it
        on_top = count_in_row(cv, p.top, png.GRID) + count_in_row(cv, p.top, png.PALETTE[0])
        self.assertGreater(count_in_row(cv, p.top, png.GRID), 20)
        self.assertGreater(on_top, (p.right - p.left) * 0.95)
        self.assertEqual(cv.ymax, 50)

    def test_tallest_bar_and_zero_bar(self):
        cv = png.render("T", ["A", "B"], ["s"], [[100, 0]], "y", width=400, height=300)
        p, blue = cv.plot, png.PALETTE[0]
        self.assertEqual(cv.ymax, 100)
        mid = (p.left + p.right) // 2
        left_cols = columns_with(cv, blue, p.bottom - 1, p.bottom, p.left, mid)
        self.assertGreater(len(left_cols), 20)
        x = min(left_cols) + len(left_cols) // 2
        ys = rows_with(cv, blue, x, x + 1)
        self.assertLessEqual(min(ys), p.top + 1)     # reaches the plot top
        self.assertEqual(max(ys), p.bottom - 1)      # and stands on the axis
        self.assertEqual(ys, set(range(min(ys), p.bottom)))
        # the value 0 bar: no bar pixels in group B above the axis
        self.assertEqual(columns_with(cv, blue, 0, p.bottom + 1, mid, cv.width), set())
        self.assertEqual(columns_with(cv, blue, 0, cv.height, mid, cv.width), set())

    def test_bar_height_proportional(self):
        cv = png.render("T", ["A", "B"], ["s"], [[100, 25]], "y", width=400, height=300)
        p, blue = cv.plot, png.PALETTE[0]
        mid = (p.left + p.right) // 2
        cols = columns_with(cv, blue, p.bottom - 1, p.bottom, mid, p.right)
        x = min(cols) + 1
        top = min(rows_with(cv, blue, x, x + 1))
        expect = p.bottom - round(0.25 * (p.bottom - p.top))
        self.assertLessEqual(abs(top - expect), 1)
        # a tiny positive value still shows: exactly one pixel row above the axis
        cv = png.render("T", ["A", "B"], ["s"], [[100, 1e-6]], "y", width=400, height=300)
        cols = columns_with(cv, blue, 0, cv.height, mid, cv.width)
        self.assertTrue(cols)
        self.assertEqual(rows_with(cv, blue, min(cols), max(cols) + 1), {p.bottom - 1})

    def test_first_series_and_none_slot(self):
        values = [[5, None], [3, 4]]
        cv = png.render("T", ["A", "B"], ["ours", "peer"], values, "y",
                        width=400, height=300)
        p, c0, c1 = cv.plot, png.PALETTE[0], png.PALETTE[1]
        mid = (p.left + p.right) // 2
        self.assertTrue(columns_with(cv, c0, p.top, p.bottom, p.left, mid))
        self.assertEqual(columns_with(cv, c0, p.top, p.bottom, mid, p.right), set())
        self.assertTrue(columns_with(cv, c1, p.top, p.bottom, mid, p.right))
        self.assertNotEqual(c0, c1)
        self.assertIn(bytes(png.NA_GREY), bytes(cv.buf))   # the 'n/a' text

    def test_custom_colors(self):
        red = (250, 10, 10)
        cv = png.render("T", ["A"], ["s"], [[5]], "y", width=200, height=150,
                        colors=[red])
        p = cv.plot
        self.assertTrue(columns_with(cv, red, p.bottom - 1, p.bottom))
        self.assertFalse(columns_with(cv, png.PALETTE[0], p.top, p.bottom))

    def test_ceiling_row(self):
        cv = png.render("T", ["A"], ["s"], [[40]], "y", ceiling=75,
                        ceiling_label="peak", width=500, height=300)
        p = cv.plot
        self.assertEqual(cv.ymax, 80)
        y = p.bottom - round(75 / 80 * (p.bottom - p.top))
        plot_w = p.right - p.left
        self.assertGreater(count_in_row(cv, y, png.CEILING), plot_w * 0.4)
        self.assertLess(count_in_row(cv, y, png.CEILING), plot_w * 0.9)  # dashed
        self.assertEqual(count_in_row(cv, y + 2, png.CEILING), 0)
        counts = {r: count_in_row(cv, r, png.CEILING) for r in range(cv.height)}
        self.assertIn(y, [r for r, n in counts.items() if n == max(counts.values())])

    def test_no_ceiling_no_red(self):
        cv = png.render("T", ["A"], ["s"], [[40]], "y", width=300, height=200)
        self.assertNotIn(bytes(png.CEILING), bytes(cv.buf))

    def test_all_none(self):
        cv = png.render("T", ["A", "B"], ["s", "t"], [[None, None], [None, None]], "y",
                        width=300, height=200)
        p = cv.plot
        self.assertEqual(cv.ymax, 1.0)
        self.assertGreater(count_in_row(cv, p.bottom, png.AXIS), (p.right - p.left) * 0.9)
        for c in png.PALETTE[:2]:
            self.assertFalse(columns_with(cv, c, p.top, p.bottom))

    def test_title_and_labels_drawn(self):
        cv = png.render("Title", ["A"], ["s"], [[40]], "TFLOP/s", width=300, height=200)
        p = cv.plot
        self.assertTrue(columns_with(cv, png.TEXT, 0, 30))                  # title
        self.assertTrue(columns_with(cv, png.TEXT, p.bottom + 2, cv.height))  # category
        self.assertTrue(columns_with(cv, png.TEXT, 0, cv.height, 0, p.left - 2))  # ticks

    def test_tiny_image_clips_text(self):
        title = "A very long title that cannot possibly fit " * 3
        for w, h in ((40, 30), (1, 1), (12, 200)):
            with self.subTest(size=(w, h)):
                cv = png.render(title, ["group one", "group two"], ["ours", "peer"],
                                [[1e6, 3], [None, 0.5]], "very long y label",
                                ceiling=2e6, ceiling_label="a long ceiling label",
                                width=w, height=h)
                self.assertEqual(len(cv.buf), w * h * 3)
        cv = png.render(title, ["g"], ["s"], [[1]], "y", width=40, height=30)
        self.assertTrue(columns_with(cv, png.TEXT, 8, 15))   # title row, clipped

    def test_text_clipping_everywhere(self):
        cv = png.Canvas(10, 10)
        for x, y in ((-20, -20), (-3, 4), (8, 8), (100, 100), (0, -5), (5, 9)):
            png.draw_text(cv, x, y, "Wg@#~", png.TEXT, 2)
        png.draw_text(cv, -3, 0, "H", png.TEXT, 1)
        self.assertEqual(cv.pixel(0, 3), png.TEXT)   # H's crossbar, columns 0..1 visible
        self.assertEqual(len(cv.buf), 300)


class ValidationTest(unittest.TestCase):
    GOOD = dict(title="T", groups=["a", "b"], series=["s"], values=[[1.0, None]],
                ylabel="y")

    def bad(self, **kw):
        args = dict(self.GOOD, **kw)
        with self.assertRaises(ValueError) as cm:
            png.render(**args)
        return str(cm.exception)

    def test_good_is_accepted(self):
        png.render(**self.GOOD)
        png.render(**dict(self.GOOD, ceiling=0))

    def test_errors(self):
        nan, inf = float("nan"), float("inf")
        cases = {
            "empty groups": dict(groups=[], values=[[]]),
            "empty series": dict(series=[], values=[]),
            "rows != series": dict(values=[[1, 2], [3, 4]]),
            "row length": dict(values=[[1]]),
            "negative": dict(values=[[-1, 2]]),
            "nan": dict(values=[[nan, 2]]),
            "inf": dict(values=[[1, inf]]),
            "-inf": dict(values=[[1, -inf]]),
            "string": dict(values=[["3", 2]]),
            "zero width": dict(width=0),
            "negative height": dict(height=-5),
            "float width": dict(width=100.5),
            "negative ceiling": dict(ceiling=-1),
            "nan ceiling": dict(ceiling=nan),
            "inf ceiling": dict(ceiling=inf),
            "bad colour": dict(colors=[(300, 0, 0)]),
        }
        for name, kw in cases.items():
            with self.subTest(name):
                self.assertTrue(self.bad(**kw))

    def test_messages_name_the_problem(self):
        self.assertIn("groups", self.bad(groups=[], values=[[]]))
        self.assertIn("values[0][1]", self.bad(values=[[1, -2]]))
        self.assertIn("width", self.bad(width=0))
        self.assertIn("ceiling", self.bad(ceiling=float("nan")))

    def test_bar_chart_validates_before_writing(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "x.png")
            with self.assertRaises(ValueError):
                png.bar_chart(p, "T", ["a"], ["s"], [[-1]], "y")
            self.assertFalse(os.path.exists(p))


class FontAndNumbersTest(unittest.TestCase):
    def test_every_printable_glyph(self):
        space = png.FONT[" "]
        self.assertEqual(space, (0,) * 7)
        seen = {}
        for code in range(32, 127):
            ch = chr(code)
            with self.subTest(ch=ch):
                g = png.FONT[ch]
                self.assertEqual(len(g), png.FONT_H)
                self.assertTrue(all(0 <= r < 1 << png.FONT_W for r in g))
                if ch != " ":
                    self.assertNotEqual(g, space)
                    self.assertNotIn(g, seen, "same glyph as %r" % seen.get(g))
                seen[g] = ch
        self.assertEqual(len(png.FONT), 95)

    def test_glyph_pixels(self):
        cv = png.Canvas(12, 9)
        png.draw_text(cv, 1, 1, "L", png.TEXT)
        lit = {(x, y) for y in range(9) for x in range(12) if cv.pixel(x, y) == png.TEXT}
        self.assertEqual(lit, {(1, y) for y in range(1, 8)} | {(x, 7) for x in range(1, 6)})

    def test_unknown_char_is_a_box(self):
        cv = png.Canvas(7, 9)
        png.draw_text(cv, 1, 1, "\u00e9", png.TEXT)
        lit = {(x, y) for y in range(9) for x in range(7) if cv.pixel(x, y) == png.TEXT}
        box = {(x, y) for x in range(1, 6) for y in range(1, 8)
               if x in (1, 5) or y in (1, 7)}
        self.assertEqual(lit, box)

    def test_scale_two(self):
        self.assertEqual(png.text_size("ab", 2), (22, 14))
        cv = png.Canvas(20, 20)
        png.draw_text(cv, 0, 0, ".", png.TEXT, 2)
        lit = {(x, y) for y in range(20) for x in range(20) if cv.pixel(x, y) == png.TEXT}
        self.assertEqual(lit, {(x, y) for x in range(2, 6) for y in range(10, 14)})

    def test_nice_scale(self):
        for v in (0.001, 0.0123, 0.93, 1, 3, 7, 9.99, 10, 42, 75, 100, 512, 989, 1234.5, 2e6):
            with self.subTest(v=v):
                ymax, step = png.nice_scale(v)
                self.assertGreaterEqual(ymax, v)
                n = round(ymax / step)
                self.assertTrue(4 <= n <= 8, n)
                self.assertAlmostEqual(ymax, n * step)
                mant = step / 10 ** math.floor(math.log10(step))
                self.assertTrue(any(abs(mant - m) < 1e-9 for m in (1, 2, 2.5, 5)), mant)
        self.assertEqual(png.nice_scale(100), (100, 20))
        self.assertEqual(png.nice_scale(512), (600, 100))
        self.assertEqual(png.nice_scale(0), (1.0, 0.2))

    def test_fmt_value(self):
        cases = {0: "0", 0.93: "0.93", 0.9349: "0.935", 12.34: "12.3", 512: "512",
                 1234: "1234", 12345: "12.3k", 2.5e6: "2.5M", 7.5: "7.5"}
        for v, s in cases.items():
            self.assertEqual(png.fmt_value(v), s)


class SpeedTest(unittest.TestCase):
    def test_full_size_chart_is_fast(self):
        import time
        vals = [[100.0 * (i + 1) + j for j in range(5)] for i in range(5)]
        t0 = time.perf_counter()
        cv = png.render("Speed", ["J1", "J2", "J3", "J4", "D8k"],
                        ["a", "b", "c", "d", "e"], vals, "TFLOP/s", ceiling=900,
                        ceiling_label="peak")
        png.encode_png(cv.width, cv.height, cv.buf)
        self.assertLess(time.perf_counter() - t0, 2.0)   # ~0.03 s; generous for CI


if __name__ == "__main__":
    unittest.main()
