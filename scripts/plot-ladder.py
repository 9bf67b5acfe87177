#!/usr/bin/env python3
"""Draws match scores against training time as an SVG, with 95% Wilson intervals.

Usage: python3 scripts/plot-ladder.py SPEC.json OUT.svg

SPEC.json: {"title": str, "xmax": minutes, "series": [{"label": str, "color": "#rrggbb",
"points": [[minutes, wins, draws, losses], ...], optional "dash": "5 3" (a dashed line),
"offset": pixels (shifts the interval bars sideways so that series do not hide each other),
"score_only": 1 (the hover text gives the score alone)}]}. A score is (wins + draws / 2) / games.
"""
import json
import math
import sys


def wilson(p, n, z=1.96):
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return c - h, c + h


def main(spec_path, out_path):
    spec = json.load(open(spec_path))
    W, H, L, R, T, B = 760, 420, 56, 40, 36, 64
    xmax = spec["xmax"]

    def X(m):
        return L + (W - L - R) * m / xmax

    def Y(s):
        return T + (H - T - B) * (1 - s)

    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="10">',
         f'<text x="{L}" y="20" font-size="13">{spec["title"]}</text>']
    for s in (0, .25, .5, .75, 1):
        dash = ' stroke-dasharray="4 3" stroke-width="1.5"' if s == .5 else ''
        o.append(f'<line x1="{L}" x2="{W-R}" y1="{Y(s):.1f}" y2="{Y(s):.1f}" stroke="#ccc"{dash}/>'
                 f'<text x="{L-4}" y="{Y(s)+3:.1f}" text-anchor="end">{s:.2f}</text>')
    for m in range(0, xmax + 1, 15):
        o.append(f'<text x="{X(m):.1f}" y="{H-B+14}" text-anchor="middle">{m}</text>')
    o.append(f'<text x="{(L+W-R)/2:.1f}" y="{H-B+30}" text-anchor="middle">minutes of training</text>')
    ly = 50
    for ser in spec["series"]:
        col, dash, off = ser["color"], ser.get("dash", ""), ser.get("offset", 0)
        da = f' stroke-dasharray="{dash}"' if dash else ''
        pts = []
        for m, w, d, l in ser["points"]:
            n = w + d + l
            p = (w + d / 2) / n
            lo, hi = wilson(p, n)
            pts.append((m, p, lo, hi, w, d, l))
        o.append(f'<polyline fill="none" stroke="{col}" stroke-width="1.5"{da} points="'
                 + " ".join(f"{X(m):.1f},{Y(p):.1f}" for m, p, *_ in pts) + '"/>')
        for m, p, lo, hi, w, d, l in pts:
            x = X(m) + off
            wdl = "" if ser.get("score_only") else f"{w}-{d}-{l}, "
            o.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{Y(lo):.1f}" y2="{Y(hi):.1f}" stroke="{col}" stroke-opacity="0.5"/>')
            o.append(f'<circle cx="{X(m):.1f}" cy="{Y(p):.1f}" r="2.5" fill="{col}"><title>{ser["label"]}, {m} min: '
                     f'{wdl}{p:.3f} [{lo:.3f}, {hi:.3f}]</title></circle>')
        o.append(f'<line x1="{W-R-250}" x2="{W-R-230}" y1="{ly}" y2="{ly}" stroke="{col}" stroke-width="1.5"{da}/>'
                 f'<text x="{W-R-226}" y="{ly+3}">{ser["label"]}</text>')
        ly += 14
    o.append('</svg>')
    open(out_path, "w").write("\n".join(o) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
