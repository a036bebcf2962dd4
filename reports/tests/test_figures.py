#!/usr/bin/env python3
"""What the report's benchmark figures (torchplace.report.plots) show a reader: titles, axis
labels, log scales, tick texts, the plotted medians and min-max whiskers, which label goes with
which series, legends and annotations; and to_png. Each figure is read from the matplotlib Figure
the function builds (its to_png replaced). Every input is synthetic, made here: round numbers, not
measurements."""
import struct
import unittest

from figure_helpers import FigureCase
from matplotlib.colors import to_rgba

from torchplace.report import plots, tables

KIB, MIB = 1 << 10, 1 << 20


def points(scale, sizes):
    """Synthetic (bytes, median, min, max) rows, growing with the size: min < median < max."""
    return [
        (n, scale * (i + 1), scale * (i + 1) * 0.8, scale * (i + 1) * 1.25)
        for i, n in enumerate(sizes)
    ]


H2D_SIZES, D2H_SIZES = (4 * KIB, MIB, 64 * MIB), (4 * KIB, 256 * MIB)
# h2d: five strategies, one unknown to STRATEGY_ORDER (drawn last); d2h: two, slower
H2D = {
    "zz_synthetic": points(1.0, H2D_SIZES),
    "pageable": points(3.0, H2D_SIZES),
    tables.PINNED: points(9.0, H2D_SIZES),
    tables.RAW: points(12.0, H2D_SIZES),
    "prefetch": points(6.0, H2D_SIZES),
}
H2D_ORDER = [tables.RAW, tables.PINNED, "prefetch", "pageable", "zz_synthetic"]
D2H = {"pageable": points(0.5, D2H_SIZES), tables.RAW: points(4.0, D2H_SIZES)}


class TransferBandwidth(FigureCase):
    def setUp(self):
        self.figure = self.figure_of(plots, plots.transfer_bandwidth, {"d2h": D2H, "h2d": H2D})
        self.h2d, self.d2h = self.figure.axes

    def test_one_panel_per_direction_host_to_device_first(self):
        self.assertEqual(len(self.figure.axes), 2)
        self.assertEqual(self.h2d.get_title(), "host → device bandwidth")
        self.assertEqual(self.d2h.get_title(), "device → host bandwidth")
        self.assertLess(self.h2d.get_position().x0, self.d2h.get_position().x0)
        self.assertEqual(
            self.figure._suptitle.get_text(),
            "Transfer bandwidth by strategy (median, whiskers: min–max of repetitions)",
        )

    def test_each_panel_plots_its_strategies_medians_and_whiskers(self):
        def label(name):
            return f"{name} (ceiling)" if name == tables.RAW else name

        self.assert_series(self.h2d, {label(n): H2D[n] for n in H2D_ORDER})
        self.assert_series(self.d2h, {label(n): D2H[n] for n in (tables.RAW, "pageable")})

    def test_axes_log_scaled_labelled_and_shared(self):
        for axis, sizes in ((self.h2d, H2D_SIZES), (self.d2h, D2H_SIZES)):
            self.assert_log_y(axis, "bandwidth (GB/s, log scale)")
            self.assert_size_axis(axis, sizes)
        self.assertEqual(self.h2d.get_ylim(), self.d2h.get_ylim())  # one y scale for both panels
        for axis in (self.h2d, self.d2h):  # ... with its numbers written beside each panel
            visible = [t for t in axis.get_yticklabels() if t.get_visible() and t.get_text()]
            self.assertTrue(visible, axis.get_title())

    def test_legend_names_each_strategy_once_below_the_panels(self):
        legend = self.figure.legends[0]
        texts = [t.get_text() for t in legend.get_texts()]
        self.assertEqual(texts, [f"{tables.RAW} (ceiling)"] + H2D_ORDER[1:])
        self.assertEqual(self.legend_columns(legend), 4)  # five entries: four a row, at most
        self.assertFalse(legend.get_frame_on())
        renderer = self.drawn(self.figure)
        top = legend.get_window_extent(renderer).y1
        for axis in self.figure.axes:
            self.assertLessEqual(top, axis.get_tightbbox(renderer).y0 + 1)

    def test_ceiling_is_a_black_dashed_line_over_the_others(self):
        for axis in self.figure.axes:
            lines = {c.get_label(): c.lines[0] for c in axis.containers}
            raw = lines.pop(f"{tables.RAW} (ceiling)")
            self.assertEqual((raw.get_color(), raw.get_linestyle()), ("black", "--"))
            self.assertGreater(raw.get_zorder(), max(line.get_zorder() for line in lines.values()))
        h2d = {c.get_label(): c.lines[0].get_color() for c in self.h2d.containers}
        d2h = {c.get_label(): c.lines[0].get_color() for c in self.d2h.containers}
        self.assertEqual(h2d["pageable"], d2h["pageable"])  # one colour a strategy, every panel
        self.assertEqual(
            to_rgba(h2d["pageable"]), to_rgba(plots.STRATEGY_STYLES["pageable"]["color"])
        )
        self.assertEqual(len(set(h2d.values())), len(h2d))


class PinnedPageable(FigureCase):
    RATIOS = {  # synthetic pinned / pageable ratios; d2h measured at other sizes than h2d
        "h2d": [(4 * KIB, 1.5, 1.2, 1.9), (MIB, 2.5, 2.0, 3.0)],
        "d2h": [(MIB, 0.8, 0.7, 1.1), (64 * MIB, 1.2, 1.0, 1.4)],
    }

    def test_one_curve_per_direction_around_a_dotted_line_at_one(self):
        figure = self.figure_of(plots, plots.pinned_pageable, self.RATIOS)
        (axis,) = figure.axes
        self.assert_series(
            axis, {"host → device": self.RATIOS["h2d"], "device → host": self.RATIOS["d2h"]}
        )
        for container in axis.containers:
            self.assertEqual(container.lines[0].get_marker(), "o")  # the medians are points
        self.assertEqual(axis.get_title(), f"Pinned ({tables.PINNED}) over pageable bandwidth")
        self.assertEqual(axis.get_ylabel(), "pinned / pageable bandwidth (×)")
        self.assertEqual(axis.get_yscale(), "linear")
        (one,) = [line for line in axis.lines if line.get_linestyle() == ":"]
        self.assertEqual(list(one.get_ydata()), [1.0, 1.0])
        self.assertLess(0, one.get_linewidth())
        self.assertLess(one.get_linewidth(), axis.containers[0].lines[0].get_linewidth())
        self.assert_size_axis(axis, [4 * KIB, MIB, 64 * MIB])
        legend = axis.get_legend()
        self.assertEqual(
            [t.get_text() for t in legend.get_texts()], ["host → device", "device → host"]
        )
        self.assert_legend_right_of(axis)


class CpuCopy(FigureCase):
    CURVES = {  # synthetic GB/s; the paths measured at different sizes
        "clone": points(4.0, (4 * KIB, MIB)),
        "memcpy": points(8.0, (MIB, 64 * MIB)),
        "copy_": points(5.0, (4 * KIB, 64 * MIB)),
        "alloc_memcpy": points(6.0, (4 * KIB, 256 * MIB)),
    }

    def test_baselines_first_memcpy_dashed_alloc_memcpy_dotted(self):
        figure = self.figure_of(plots, plots.cpu_copy, self.CURVES)
        (axis,) = figure.axes
        order = ["alloc_memcpy", "memcpy", "clone", "copy_"]
        self.assert_series(axis, {path: self.CURVES[path] for path in order})
        lines = {c.get_label(): c.lines[0] for c in axis.containers}
        self.assertEqual(
            (lines["memcpy"].get_linestyle(), lines["memcpy"].get_color()), ("--", "black")
        )
        self.assertEqual(lines["alloc_memcpy"].get_linestyle(), ":")
        for path in ("clone", "copy_"):  # the baselines drawn bolder than the paths they measure
            self.assertEqual(lines[path].get_linestyle(), "-")
            for baseline in ("memcpy", "alloc_memcpy"):
                self.assertLess(lines[path].get_linewidth(), lines[baseline].get_linewidth())
        self.assertEqual(
            axis.get_title(), "CPU copy baselines (memcpy dashed, alloc_memcpy dotted)"
        )
        self.assert_log_y(axis, "bandwidth (GB/s, log scale)")
        self.assert_size_axis(
            axis, [4 * KIB, MIB, 64 * MIB, 256 * MIB], "copy size (bytes, log scale)"
        )
        self.assertEqual([t.get_text() for t in axis.get_legend().get_texts()], order)
        self.assert_legend_right_of(axis)


class SmallTensors(FigureCase):
    GROUPS = {  # synthetic (median, min, max) ms per batch; "zz_synthetic" has no style of its own
        "small_tensors, h2d: 1000 tensors × 4 KiB": {
            "pageable": (3.0, 2.5, 4.0),
            tables.RAW: (1.0, 0.9, 1.2),
            "zz_synthetic": (12.0, 10.0, 20.0),
        },
        "nested_batch, h2d: 10 tensors × 1 MiB": {
            "pageable": (2.0, 1.5, 2.2),
            tables.PINNED: (0.5, 0.4, 0.6),
        },
    }

    def test_one_bar_panel_per_case_fastest_strategy_order(self):
        figure = self.figure_of(plots, plots.small_tensors, self.GROUPS)
        self.assertEqual([axis.get_title() for axis in figure.axes], list(self.GROUPS))
        self.assertGreater(
            figure.axes[0].get_position().y0, figure.axes[1].get_position().y1
        )  # stacked
        renderer = self.drawn(figure)
        upper, lower = (axis.get_tightbbox(renderer) for axis in figure.axes)
        self.assertGreater(upper.y0, lower.y1, "a panel's labels clear of the next one's title")
        for axis, by_strategy in zip(figure.axes, self.GROUPS.values()):
            names = sorted(by_strategy, key=tables.strategy_key)
            self.assertEqual([t.get_text() for t in axis.get_yticklabels()], names)
            self.assertTrue(axis.yaxis_inverted(), "the first strategy on top")
            self.assertEqual(axis.get_xlabel(), "time per batch (ms), lower is better")
            (bars,) = [c for c in axis.containers if hasattr(c, "patches")]
            (whiskers,) = [c for c in axis.containers if c is not bars][0].lines[2]
            for y, (name, bar, segment) in enumerate(
                zip(names, bars.patches, whiskers.get_segments())
            ):
                median, low, high = by_strategy[name]
                self.assertEqual((bar.get_x(), bar.get_width()), (0, median), name)
                self.assertAlmostEqual(bar.get_y() + bar.get_height() / 2, y)
                self.assertEqual([list(p) for p in segment], [[low, y], [high, y]], name)
                colour = plots.STRATEGY_STYLES.get(name, {}).get("color", "#4477AA")
                self.assertEqual(bar.get_facecolor(), to_rgba(colour), name)
            self.check_value_labels(axis, renderer, [by_strategy[n] for n in names])

    def check_value_labels(self, axis, renderer, spreads):
        """'1.5 ms' right of each bar's whisker, level with the bar, inside the panel; x from 0."""
        self.assertEqual(axis.get_xlim()[0], 0)
        self.assertEqual([t.get_text() for t in axis.texts], [f"{s[0]:.3g} ms" for s in spreads])
        panel = axis.get_window_extent(renderer)
        for y, (text, (_, _, high)) in enumerate(zip(axis.texts, spreads)):
            self.assertEqual(text.xy, (high, y))
            self.assertGreater(text.xyann[0], 0)  # a gap after the whisker's cap
            self.assertEqual((text.xyann[1], text.get_va()), (0, "center"))
            self.assertLess(high, axis.get_xlim()[1], "the whisker, and so its label, is drawn")
            box = text.get_window_extent(renderer)
            self.assertTrue(panel.x0 < box.x0 < box.x1 <= panel.x1, text.get_text())


class BatchMover(FigureCase):
    ROWS = [  # synthetic (tensors, mover, loop, mover / loop): (median, min, max) µs, or None
        (8, (10.0, 9.0, 12.0), (40.0, 35.0, 50.0), 0.25),
        (64, (20.0, 18.0, 25.0), None, None),
        (512, None, (300.0, 280.0, 350.0), None),
    ]

    def setUp(self):
        self.figure = self.figure_of(plots, plots.batch_mover, self.ROWS)
        (self.axis,) = self.figure.axes

    def test_mover_left_loop_right_of_each_tensor_count(self):
        bars = {c.get_label(): c for c in self.axis.containers if hasattr(c, "patches")}
        self.assertEqual(list(bars), ["mover", "loop"])
        labels = iter(self.axis.texts)  # the value labels, the mover's bars first
        for index, name, side in ((1, "mover", -1), (2, "loop", 1)):
            present = [(i, row[index]) for i, row in enumerate(self.ROWS) if row[index]]
            patches = bars[name].patches
            self.assertEqual([p.get_height() for p in patches], [s[0] for _, s in present])
            whiskers = bars[name].errorbar.lines[2][0].get_segments()
            for (i, (median, low, high)), patch, whisker in zip(present, patches, whiskers):
                edge = patch.get_x() if side > 0 else patch.get_x() + patch.get_width()
                self.assertAlmostEqual(edge, i)  # the pair of bars meets at the tick
                self.assertGreater(patch.get_width(), 0.3)
                centre = patch.get_x() + patch.get_width() / 2
                self.assertEqual([list(p) for p in whisker], [[centre, low], [centre, high]])
                label = next(labels)
                self.assertEqual((label.get_text(), label.xy[0]), (f"{median:.3g} µs", centre))
        self.assertEqual(len(self.axis.texts), 4)

    def test_tensor_counts_ratio_scale_and_legend(self):
        axis = self.axis
        self.assertEqual(
            [t.get_text() for t in axis.get_xticklabels()],
            ["8 tensors\nmover / loop = 0.25×", "64 tensors", "512 tensors"],
        )
        self.assertEqual(list(axis.get_xticks()), [0, 1, 2])
        self.assert_log_y(axis, "time per call (µs, log scale)")
        self.assertEqual(axis.get_title(), "tp::fixes::to_device (mover) against a loop of .to()")
        self.assertEqual([t.get_text() for t in axis.get_legend().get_texts()], ["mover", "loop"])
        self.assert_legend_right_of(axis)
        renderer = self.drawn(self.figure)
        top = axis.get_window_extent(renderer).y1
        for text in axis.texts:  # every value label above its bar, inside the plot
            self.assertLessEqual(text.get_window_extent(renderer).y1, top, text.get_text())
        self.assertFalse([g for g in axis.xaxis.get_gridlines() if g.get_visible()])
        self.assertTrue([g for g in axis.yaxis.get_gridlines() if g.get_visible()])


class ToPng(unittest.TestCase):
    def test_the_figure_as_png_bytes_then_closed(self):
        figure, axis = plots.plt.subplots(figsize=(2, 1))
        axis.plot([0, 1], [0, 1])  # synthetic
        data = plots.to_png(figure)
        self.assertTrue(data.startswith(b"\x89PNG\r\n\x1a\n"), data[:8])
        width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk: pixels
        self.assertGreater(min(width, height), 50, (width, height))
        self.assertFalse(plots.plt.fignum_exists(figure.number), "closed: no figure left open")


if __name__ == "__main__":
    unittest.main(verbosity=2)
