"""tests/gpu/acceptance_report.py: the "% roof" of the report's GB/s rows.

The emulated acceptance run (ctest gpu_acceptance_emulated) has no link
figure, so its transfers show no roof; this checks the three cases on
result dictionaries shaped like a real run's (the fourth H100 run's pinned
h2d, one-rank all_reduce and copy): a transfer against its own link roof,
a result with no roof none, a memory-bound op against the device's memory
bandwidth.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import acceptance_report  # noqa: E402

H100 = {"mem_bw_bytes_per_s": 3350e9}


class ByteRoof(unittest.TestCase):
    def test_transfer_against_its_link(self):
        h2d = {"gbps": 54.7865, "bandwidth_gbps": 63.0154, "pct_roof": 86.9415,
               "bound": "link"}
        self.assertEqual(acceptance_report.byte_roof(h2d, H100), "86.9")

    def test_link_without_a_figure(self):
        h2d = {"gbps": 53.2, "bandwidth_gbps": 0, "pct_roof": 0, "bound": "link"}
        self.assertEqual(acceptance_report.byte_roof(h2d, H100), "-")

    def test_no_roof_is_none(self):
        one_rank = {"gbps": 1454.75, "bandwidth_gbps": 0, "pct_roof": 0, "bound": ""}
        self.assertEqual(acceptance_report.byte_roof(one_rank, H100), "-")

    def test_memory_against_the_device(self):
        copy = {"gbps": 2809.0, "bandwidth_gbps": 2930.9, "pct_roof": 95.8,
                "bound": "memory"}
        self.assertEqual(acceptance_report.byte_roof(copy, H100), "83.9")
        self.assertEqual(acceptance_report.byte_roof(copy, {}), "-")

    def test_the_table_row(self):
        r = {"op": "h2d", "status": "ok", "stats": {"median_ns": 9.799e6},
             "derived": {"gbps": 54.7865, "bandwidth_gbps": 63.0154,
                         "pct_roof": 86.9415, "bound": "link"}}
        row = acceptance_report.Row(r, H100, None)
        self.assertEqual((row.rate, row.roof), ("54.79 GB/s", "86.9"))


if __name__ == "__main__":
    unittest.main()
