"""Helpers of test_figures.py and test_figures_matrix.py: the matplotlib Figure a drawing function
builds, kept in process (its to_png replaced), and checks of the axes every size plot shares."""
import unittest
from unittest import mock

from torchplace.report import plots

PNG = b"synthetic png bytes"  # what the stand-in to_png returns


class FigureCase(unittest.TestCase):
    def figure_of(self, module, draw, *args):
        """The one Figure draw(*args) hands to module.to_png; draw must return what to_png gave."""
        kept = []

        def keep(figure):
            kept.append(figure)
            return PNG

        with mock.patch.object(module, "to_png", side_effect=keep):
            returned = draw(*args)
        self.assertEqual(len(kept), 1)
        self.addCleanup(plots.plt.close, kept[0])
        self.assertIs(returned, PNG, "the figure's PNG is what the function returns")
        return kept[0]

    @staticmethod
    def drawn(figure):
        """The figure laid out (tick labels made, extents known); returns its renderer."""
        figure.canvas.draw()
        return figure.canvas.get_renderer()

    def assert_size_axis(self, axis, sizes, label="transfer size (bytes, log scale)"):
        """A log2 x axis, ticked exactly at the measured sizes, labelled 4 KiB, 64 MiB, ..."""
        self.assertEqual(axis.get_xscale(), "log")
        self.assertEqual(axis.xaxis.get_transform().base, 2)
        self.assertEqual(list(axis.xaxis.get_major_locator()()), sorted(set(sizes)))
        self.assertEqual(list(axis.xaxis.get_minor_locator()()), [], "no minor ticks")
        name = axis.xaxis.get_major_formatter()
        self.assertEqual(
            [name(4096, 0), name(1 << 26, 0), name(1 << 30, 0)], ["4 KiB", "64 MiB", "1 GiB"]
        )
        self.assertEqual(axis.get_xlabel(), label)
        self.drawn(axis.figure)
        self.assertEqual({t.get_rotation() for t in axis.get_xticklabels()}, {45.0})

    def assert_log_y(self, axis, label):
        """A log y axis, major ticks at 1-2-5 steps written as plain numbers, no minor labels."""
        self.assertEqual(axis.get_yscale(), "log")
        ticks = list(axis.yaxis.get_major_locator().tick_values(1, 100))
        for value in (1, 2, 5, 10, 20, 50, 100):
            self.assertTrue(any(abs(t - value) < 1e-9 * value for t in ticks), (value, ticks))
        self.assertFalse([t for t in ticks if 1 < t < 100 and t not in (2, 5, 10, 20, 50)], ticks)
        write = axis.yaxis.get_major_formatter()
        self.assertEqual([write(v, 0) for v in (0.5, 2, 50, 1000)], ["0.5", "2", "50", "1000"])
        self.assertEqual(axis.yaxis.get_minor_formatter()(3, 0), "")
        self.assertEqual(axis.get_ylabel(), label)

    def legend_columns(self, legend):
        """How many columns the legend's entries stand in, as the reader sees them."""
        renderer = self.drawn(legend.figure)
        return len({round(t.get_window_extent(renderer).x0) for t in legend.get_texts()})

    def assert_legend_right_of(self, axis):
        """The axis' legend beside it, on the right, clear of the curves."""
        renderer = self.drawn(axis.figure)
        legend = axis.get_legend().get_window_extent(renderer)
        self.assertGreaterEqual(legend.x0, axis.get_window_extent(renderer).x1)

    @staticmethod
    def series(axis):
        """{label: (xs, medians, [(low, high)...])}: the axis' error-bar series, as drawn."""
        out = {}
        for container in axis.containers:
            line, _, (whiskers,) = container.lines
            spans = [(segment[0][1], segment[1][1]) for segment in whiskers.get_segments()]
            out[container.get_label()] = (list(line.get_xdata()), list(line.get_ydata()), spans)
        return out

    def assert_series(self, axis, expected):
        """expected: {label: [(x, median, min, max)]}, in the order drawn."""
        drawn = self.series(axis)
        self.assertEqual(list(drawn), list(expected))
        for label, points in expected.items():
            xs, medians, spans = drawn[label]
            self.assertEqual(xs, [p[0] for p in points], label)
            self.assertEqual(medians, [p[1] for p in points], label)
            for (low, high), point in zip(spans, points):
                self.assertAlmostEqual(low, point[2], msg=label)
                self.assertAlmostEqual(high, point[3], msg=label)
