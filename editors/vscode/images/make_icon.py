# The extension's icon: a white partial-derivative sign on PyTorch's orange, drawn without libraries.
# Run from editors/vscode: python3 images/make_icon.py
import math, struct, zlib
N, S = 128, 4  # size, supersampling
ORANGE, WHITE = (238, 76, 44), (255, 255, 255)
def inside_rounded(x, y, r=24, m=4):
    x0, y0, x1, y1 = m, m, N - m, N - m
    cx = min(max(x, x0 + r), x1 - r); cy = min(max(y, y0 + r), y1 - r)
    return x0 <= x <= x1 and y0 <= y <= y1 and (x - cx) ** 2 + (y - cy) ** 2 <= r * r
def on_glyph(x, y):
    # the bowl: a ring
    d = math.hypot(x - 58, y - 80)
    if 18 <= d <= 31:
        return True
    # the stem: an arc from the bowl's right side up and over to the left, ending in a ball
    d2 = math.hypot(x - 52, y - 62)
    a = math.degrees(math.atan2(y - 62, x - 52))
    if 36 <= d2 <= 48 and -150 <= a <= 20:
        return True
    bx, by = 52 + 42 * math.cos(math.radians(-150)), 62 + 42 * math.sin(math.radians(-150))
    return math.hypot(x - bx, y - by) <= 9
rows = []
for j in range(N):
    row = bytearray([0])
    for i in range(N):
        bg = gl = 0
        for sj in range(S):
            for si in range(S):
                x, y = i + (si + .5) / S, j + (sj + .5) / S
                if inside_rounded(x, y):
                    bg += 1
                    gl += on_glyph(x, y)
        cov = bg / S / S; g = gl / max(bg, 1)
        rgb = [round(o * (1 - g) + w * g) for o, w in zip(ORANGE, WHITE)]
        row += bytes(rgb + [round(255 * cov)])
    rows.append(bytes(row))
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", N, N, 8, 6, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b"")
open("images/icon.png", "wb").write(png)
