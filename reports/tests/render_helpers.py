"""Helpers of test_render.py: reading the rendered page's links and tables, and the figures the
page should show, recomputed straight from the fixtures' JSON."""
import json
import statistics
from html.parser import HTMLParser


class LinkCollector(HTMLParser):
    """Every URL-bearing attribute, every id, and the images' sources."""

    URL_ATTRIBUTES = {
        "src",
        "href",
        "srcset",
        "poster",
        "data",
        "action",
        "formaction",
        "xlink:href",
    }

    def __init__(self):
        super().__init__()
        self.urls, self.ids, self.images, self.styles = [], set(), [], []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in self.URL_ATTRIBUTES:
                self.urls.append(value or "")
            if name == "id":
                self.ids.add(value)
            if name == "style":
                self.styles.append(value or "")
        if tag == "img":
            self.images.append(dict(attrs).get("src", ""))
        self._in_style = tag == "style"

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)


def load(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


class TableCollector(HTMLParser):
    """Every <table> as a list of rows, each a list of its cells' text."""

    def __init__(self):
        super().__init__()
        self.tables, self._cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def bandwidth_rows(page, direction):
    """The bandwidth table of a direction: {first cell: {size column: cell text}}."""
    collector = TableCollector()
    collector.feed(page)
    for rows in collector.tables:
        if rows and rows[0][0] == f"{direction} strategy":
            return {row[0]: dict(zip(rows[0][1:], row[1:])) for row in rows[1:]}
    raise AssertionError(f"no {direction} bandwidth table in the page")


def device_copy_medians(bench):
    """{(direction, strategy): {'256 MiB': median device_copy_bytes_per_second}}, transfers."""
    values = {}
    for entry in bench["benchmarks"]:
        if (
            entry["run_type"] != "iteration"
            or not entry["name"].startswith("transfer/")
            or "device_copy_bytes_per_second" not in entry
        ):
            continue
        fields = dict(part.split(":", 1) for part in entry["run_name"].split("/")[1:])
        size = int(fields["bytes"])
        label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
        key = (fields["direction"], fields["strategy"])
        values.setdefault(key, {}).setdefault(label, []).append(
            entry["device_copy_bytes_per_second"]
        )
    return {
        key: {label: statistics.median(v) for label, v in by_size.items()}
        for key, by_size in values.items()
    }


def cpu_copy_median(bench, path, size):
    name = f"cpu_copy/path:{path}/bytes:{size}"
    return statistics.median(
        e["bytes_per_second"]
        for e in bench["benchmarks"]
        if e["name"] == name and e["run_type"] == "iteration"
    )


def median_bandwidth(bench, direction, strategy, size):
    prefix = f"transfer/direction:{direction}/strategy:{strategy}/bytes:{size}/"
    return statistics.median(
        e["bytes_per_second"]
        for e in bench["benchmarks"]
        if e["name"].startswith(prefix) and e["run_type"] == "iteration"
    )
