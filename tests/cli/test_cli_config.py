"""mbench run --config end to end: the three schemas, --dry-run counts,
--backend, --filter, --max-flop, CSV files a config names, the progress
line, and the messages bad files get. Run by ctest with MBENCH set."""
import csv
import json
import os
import re
import subprocess
import tempfile
import textwrap
import unittest

from test_cli import run_on_pty

MBENCH = os.environ.get("MBENCH", "mbench")
HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = os.path.join(HERE, "..", "configs")
SEEDS = os.path.join(HERE, "..", "..", "..", "shared", "seeds")


def mbench(*args, cwd=None):
    e = dict(os.environ)
    e.pop("MB_BACKEND_PATH", None)
    return subprocess.run([MBENCH, *args], capture_output=True, text=True,
                          env=e, cwd=cwd, timeout=600)


class Config(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path

    def dry_count(self, path, *extra):
        p = mbench("run", "--config", path, "--dry-run", *extra)
        self.assertEqual(p.returncode, 0, p.stderr)
        m = re.search(r"(\d+) benchmarks?;", p.stdout)
        self.assertIsNotNone(m, p.stdout)
        return int(m.group(1)), p

    def test_native_sweep_runs_and_records(self):
        path = self.write("sweep.yaml", """\
            benchmarks:
              - name: tiny
                op: [gemm, add]
                shapes: [[64, 32, 16]]
                dtypes: [f32, bf16]
                backend: cpu
                timing: {samples: 3}
            """)
        # add is MxN: the 3-D shape does not fit it, and the error says so
        p = mbench("run", "--config", path, "--dry-run")
        self.assertEqual(p.returncode, 2)
        self.assertIn("sweep.yaml", p.stderr)
        self.assertIn("add", p.stderr)
        path = self.write("sweep.yaml", """\
            benchmarks:
              - name: tiny
                op: gemm
                shapes: [[64, 32, 16], "32x32x32"]
                dtypes: [f32, bf16]
                backend: cpu
                timing: {samples: 3}
            """)
        out = os.path.join(self.dir, "r.json")
        p = mbench("run", "--config", path, "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(os.path.exists(out + "l"), "the stream is removed")
        with open(out) as f:
            doc = json.load(f)
        rs = doc["results"]
        self.assertEqual(len(rs), 4)
        names = [r["name"] for r in rs]
        self.assertEqual(len(set(names)), 4)
        for r in rs:
            self.assertEqual(r["status"], "ok")
            self.assertEqual(r["stats"]["count"], 3)
            self.assertEqual(r["config"]["schema"], "native")
            self.assertTrue(r["correctness"]["pass"])

    def test_dry_run_counts_match_presets(self):
        cases = [("pow2", {}, 5), ("pow2_extended", {}, 10),
                 ("small_sweep", {}, 35), ("sweep", {}, 512),
                 ("llama", {}, 4), ("llama4", {}, 6),
                 ("small_sweep", {"min_power": 10, "max_power": 15}, 56),
                 ("pow2", {"min_power": 10, "max_power": 12}, 3)]
        for preset, params, want in cases:
            extra = "".join(f"\n        {k}: {v}" for k, v in params.items())
            path = self.write("t.yml",
                              'benchmark_mode: "inference"\n'
                              'quantization_config_recipe_names: ["baseline"]\n'
                              "model_params:\n"
                              '  - name: "m"\n'
                              "    matrix_shapes:\n"
                              f'      - name: "{preset}"{extra}\n'
                              '    high_precision_dtype: "torch.bfloat16"\n'
                              '    device: "cuda"\n'
                              '    model_type: "linear"\n')
            n, _ = self.dry_count(path)
            self.assertEqual(n, want, preset)
        # the preset list agrees
        p = mbench("list", "presets")
        self.assertEqual(p.returncode, 0)
        self.assertIn("llama4", p.stdout)

    def test_torchao_backend_override_and_ignored_keys(self):
        path = self.write("ao.yml", f"""\
            benchmark_mode: "inference"
            quantization_config_recipe_names:
              - "baseline"
            output_dir: "{self.dir}/results"
            model_params:
              - name: "small"
                matrix_shapes:
                  - name: "custom"
                    shapes: [[64, 64, 64], [128, 64, 32]]
                high_precision_dtype: "torch.bfloat16"
                use_torch_compile: true
                torch_compile_mode: "max-autotune"
                device: "cuda"
                model_type: "linear"
                enable_profiler: true
            """)
        out = os.path.join(self.dir, "r.json")
        p = mbench("run", "--config", path, "--backend", "cpu", "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr.count("torch_compile_mode"), 1, p.stderr)
        self.assertIn("has no effect here", p.stderr)
        with open(out) as f:
            rs = json.load(f)["results"]
        self.assertEqual(len(rs), 2)
        for r in rs:
            self.assertEqual(r["backend"], "cpu")
            self.assertEqual(r["recipe"], "baseline")
            self.assertEqual(r["speedup_vs_baseline"], 1)
            self.assertEqual(r["config"]["backend_override"],
                             {"requested": "cuda", "used": "cpu"})
            self.assertEqual(r["config"]["ignored"]["torch_compile_mode"],
                             "max-autotune")
        # output_dir gets a CSV of the same rows
        with open(os.path.join(self.dir, "results", "results.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 2)
        # enable_profiler: the run's trace beside it, a slice per result
        trace = os.path.join(self.dir, "results", "trace.json")
        self.assertIn("the run's trace (Chrome/Perfetto JSON) goes to " +
                      trace, p.stderr)
        with open(trace) as f:
            names = {e["name"] for e in json.load(f)}
        self.assertLessEqual({r["id"] for r in rs}, names)

    def test_jax_csv_path_and_num_runs(self):
        path = self.write("jax.yaml", f"""\
            benchmarks:
            - benchmark_name: "add"
              trace_dir: "{self.dir}/trace"
              csv_path: "{self.dir}/csv"
              benchmark_sweep_params:
                - {{ m_range: {{ start: 64, end: 256, multiplier: 2 }}, n: "SAME_AS_m", num_runs: 4 }}
            """)
        n, _ = self.dry_count(path, "--backend", "cpu")
        self.assertEqual(n, 3)
        p = mbench("run", "--config", path, "--backend", "cpu", "-f", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        rs = json.loads(p.stdout)["results"]
        self.assertEqual([r["shape"]["M"] for r in rs], [64, 128, 256])
        self.assertEqual([r["shape"]["N"] for r in rs], [64, 128, 256])
        for r in rs:
            self.assertEqual(r["stats"]["count"], 4)  # num_runs, exactly
            self.assertEqual(r["timing"]["criterion"], "fixed")
        with open(os.path.join(self.dir, "csv", "add.csv")) as f:
            rows = list(csv.reader(f))
        self.assertEqual(len(rows), 4)  # header + 3
        # trace_dir: the run's trace there, named after the config
        with open(os.path.join(self.dir, "trace", "jax.trace.json")) as f:
            names = {e["name"] for e in json.load(f)}
        self.assertLessEqual({r["id"] for r in rs}, names)
        self.assertIn("median_ns", rows[0])
        # Run again: the CSV it wrote exists now, and replacing it is said.
        p = mbench("run", "--config", path, "--backend", "cpu", "-f", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("note: " + os.path.join(self.dir, "csv", "add.csv") +
                      " (named by the config) exists; this run's results "
                      "replace it", p.stderr)

    def test_csv_path_that_cannot_be_written(self):
        # A CSV path the config names is checked before anything runs: the
        # config itself (a csv_path ending in .csv names the file), a
        # directory of that name, the -o file.
        os.makedirs(os.path.join(self.dir, "d.csv"), exist_ok=True)
        for name, target, needle in (
                ("self.csv", None, "is also an input"),
                ("dir.yaml", os.path.join(self.dir, "d.csv"),
                 "is not a regular file"),
                ("o.yaml", os.path.join(self.dir, "o.csv"),
                 "is also an input")):
            path = os.path.join(self.dir, name)
            self.write(name, f"""\
                benchmarks:
                - benchmark_name: "add"
                  csv_path: "{target or path}"
                  benchmark_sweep_params:
                    - {{ m: 64, n: 64, num_runs: 2 }}
                """)
            with open(path) as f:
                before = f.read()
            args = ["run", "--config", path, "--backend", "cpu"]
            if name == "o.yaml":
                args += ["-o", target]
            p = mbench(*args)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("the CSV file the config names", p.stderr)
            self.assertIn(needle, p.stderr)
            self.assertEqual(p.stdout, "")  # nothing ran
            with open(path) as f:
                self.assertEqual(f.read(), before)

    def test_filter_and_max_flop(self):
        path = self.write("f.yaml", """\
            benchmarks:
              - name: g
                op: gemm
                shapes: [[64, 64, 64], [128, 128, 128], [256, 256, 256]]
                backend: cpu
            """)
        n, _ = self.dry_count(path)
        self.assertEqual(n, 3)
        n, p = self.dry_count(path, "--filter", "128x")
        self.assertEqual(n, 1)
        self.assertIn("kept 1 of 3", p.stderr)
        n, p = self.dry_count(path, "--max-flop", str(2 * 128 ** 3))
        self.assertEqual(n, 2)
        self.assertIn("left out 1", p.stderr)
        p = mbench("run", "--config", path, "--filter", "(")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--filter", p.stderr)

    def test_bad_input_messages(self):
        path = self.write("bad.yaml", """\
            benchmarks:
              - name: g
                op: gemm
                shapes: [[64, 64, 64]]
                dtypes: [f32, bf61]
            """)
        p = mbench("run", "--config", path, "--dry-run")
        self.assertEqual(p.returncode, 2)
        self.assertRegex(p.stderr, r"bad\.yaml:5:.*benchmarks\[0\]\.dtypes")
        self.assertIn("bf61", p.stderr)
        path = self.write("bad2.yaml", "benchmarks: [\n")
        p = mbench("run", "--config", path)
        self.assertEqual(p.returncode, 2)
        self.assertIn("bad2.yaml", p.stderr)
        p = mbench("run", "--config", os.path.join(self.dir, "nope.yaml"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("nope.yaml", p.stderr)
        p = mbench("run", "--config", path, "--op", "gemm")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--op cannot be combined with --config", p.stderr)
        p = mbench("run", "--dry-run", "--op", "gemm")
        self.assertEqual(p.returncode, 2)
        self.assertIn("need --config", p.stderr)

    def test_checked_whole_before_running(self):
        # An unknown backend or impl in a later entry: the earlier entries
        # used to run first (then exit 2); now nothing runs, --dry-run
        # says so too, and no output file is written.
        for key, value, words in (
                ("backend", "tpu", 'unknown backend "tpu"; backends: cpu'),
                ("impl", "mine", 'unknown implementation "mine" for add on '
                                 "cpu; available:")):
            path = self.write(f"late_{key}.yaml", f"""\
                benchmarks:
                  - op: copy
                    shapes: [[64, 64]]
                  - op: add
                    shapes: [[64, 64]]
                    {key}: {value}
                """)
            out = os.path.join(self.dir, f"{key}.json")
            for extra in (["--dry-run"], ["--samples", "2", "-o", out]):
                p = mbench("run", "--config", path, *extra)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn("add/64x64/f32: " + words, p.stderr)
                self.assertNotIn("copy", p.stdout)
                self.assertFalse(os.path.exists(out))
        path = self.write("ok.yaml", """\
            benchmarks:
              - op: copy
                shapes: [[64, 64]]
            """)
        p = mbench("run", "--config", path, "--interleave", "abc",
                   "--dry-run")
        self.assertEqual(p.returncode, 2)
        self.assertIn('--interleave: "abc" is not a seed', p.stderr)

    def test_control_characters_escaped(self):
        # A name or an impl from a file reaches the terminal as text: ESC
        # [ 2 J (clear screen) printed as \x1b[2J.
        path = self.write("evil.yaml", """\
            benchmarks:
              - name: "evil\\e[2Jname"
                op: copy
                shapes: [[64, 64]]
            """)
        p = mbench("run", "--config", path, "--dry-run")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("evil\\x1b[2Jname/64x64/f32", p.stdout)
        self.assertNotIn("\x1b", p.stdout)
        with open(path, "a") as f:
            f.write('    impl: "x\\e[31my"\n')
        p = mbench("run", "--config", path, "--dry-run")
        self.assertEqual(p.returncode, 2)
        self.assertIn('unknown implementation "x\\x1b[31my"', p.stderr)
        self.assertNotIn("\x1b", p.stderr)

    def test_progress_only_on_a_terminal(self):
        path = self.write("p.yaml", """\
            benchmarks:
              - op: add
                shapes: [[64, 64], [128, 128]]
                backend: cpu
                timing: {samples: 3}
            """)
        p = mbench("run", "--config", path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("ETA", p.stderr)
        rc, _, seen = run_on_pty(["run", "--config", path])
        self.assertEqual(rc, 0, seen)
        self.assertIn("[2/2]", seen)
        self.assertIn("ETA", seen)

    def seed_yaml(self, name):
        """The ```yaml blocks of a seed document, as files."""
        with open(os.path.join(SEEDS, name)) as f:
            text = f.read()
        blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
        blocks += [textwrap.dedent(b) for b in re.findall(
            r"\.\. code-block:: yaml\n\n(.*?)\n(?=\S)", text, re.S)]
        return blocks

    def test_seed_files_load_or_name_what_is_missing(self):
        """The predecessors' files (tests/configs/torchao and jax hold them
        verbatim, and versions of them that ask only for what is built)
        load, or fail naming the recipe/model/mode that is not built."""
        blocks = []
        for sub in ("torchao", "jax"):
            d = os.path.join(CONFIGS, sub)
            for name in sorted(os.listdir(d)):
                if not os.path.isfile(os.path.join(d, name)):
                    continue  # jax/current: the suite's current layout
                with open(os.path.join(d, name)) as f:
                    blocks.append((f"{sub}/{name}", f.read()))
        # The seed documents themselves, where they sit beside the repo.
        seeds = sorted(os.listdir(SEEDS)) if os.path.isdir(SEEDS) else []
        for name in seeds:
            if name.endswith(".txt"):
                blocks += [(f"{name}#{i}", b)
                           for i, b in enumerate(self.seed_yaml(name))]
        loaded = tried = 0
        for label, block in blocks:
            if (not re.search(r"^(model_params|benchmarks):", block, re.M)
                    or "# ..." in block):
                continue  # a fragment, not a whole file
            path = self.write("seed.yml", block)
            p = mbench("run", "--config", path, "--dry-run",
                       "--backend", "cpu")
            tried += 1
            if p.returncode == 0:
                loaded += 1
                continue
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertRegex(
                p.stderr,
                r"not built in this version|unknown (recipe|model) \"my_",
                f"{label}: {p.stderr}")
        self.assertGreaterEqual(tried, 15)
        self.assertGreaterEqual(loaded, 8)


class JaxSuiteNames(unittest.TestCase):
    """Issue 23 items 7 and 8: the JAX suite's files, both layouts, list
    every benchmark (what we do not run as skipped, saying why), and the
    rest runs."""

    def dry_rows(self, path):
        p = mbench("run", "--config", path, "--backend", "cpu", "--dry-run")
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = [line for line in p.stdout.splitlines()
                if re.match(r"\d+ ", line)]
        m = re.search(r"\(jax schema\): (\d+) benchmarks?;", p.stdout)
        self.assertIsNotNone(m, p.stdout)
        self.assertEqual(len(rows), int(m.group(1)), p.stdout)
        return rows

    def test_current_layout_files_list_every_benchmark(self):
        d = os.path.join(CONFIGS, "jax", "current")
        expect = {"gemm_generalized.yaml": (4, 0),
                  "hbm_bandwidth.yaml": (11, 0),
                  "all_gather.yaml": (3, 0),
                  "all_reduce.yaml": (3, 0),
                  "all_to_all.yaml": (3, 0),
                  "reduce_scatter.yaml": (3, 0),
                  "host_device.yaml": (22, 0),
                  "attention_jax_flash.yaml": (16, 0),
                  "sample.yaml": (30, 0)}
        for name, (count, skipped) in expect.items():
            rows = self.dry_rows(os.path.join(d, name))
            self.assertEqual(len(rows), count, name)
            skips = [r for r in rows if "skipped: " in r]
            self.assertEqual(len(skips), skipped, name)
            for r in skips:
                self.assertRegex(r, r"skipped: \S.*(yet|not)", r)
        # the collectives plan to our ops (test_plan_jax5 checks N)
        rows = self.dry_rows(os.path.join(d, "all_gather.yaml"))
        self.assertIn("all_gather/512/bfloat16/mesh=4x2x2/shard=4x2x2",
                      rows[0])

    def test_legacy_collective_files_list_every_benchmark(self):
        """Upstream's Ironwood/configs/collectives files: every combination
        planned to our collective ops; send_recv is one skipped entry."""
        d = os.path.join(CONFIGS, "jax", "collectives")
        expect = {"all_reduce_tpu7x_2x2x1.yaml": (24, 0),
                  "all_reduce_2d.yaml": (26, 0),
                  "all_gather_1d.yaml": (26, 0),
                  "all_gather_demo.yaml": (54, 0),
                  "reduce_scatter_1d.yaml": (26, 0),
                  "all_to_all_v6e_4x4.yaml": (12, 0),
                  "send_recv.yaml": (1, 1)}
        for name, (count, skipped) in expect.items():
            rows = self.dry_rows(os.path.join(d, name))
            self.assertEqual(len(rows), count, name)
            skips = [r for r in rows if "skipped: " in r]
            self.assertEqual(len(skips), skipped, name)
        self.assertIn("psum/8x8x128/float32/mesh=2x2x2/shard=2x2x1",
                      self.dry_rows(os.path.join(
                          d, "all_reduce_tpu7x_2x2x1.yaml"))[0])

    def run_text(self, text, *extra):
        """The results of `mbench run --config` on the CPU of a config file
        holding `text` (exit 0 asserted)."""
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "c.yaml")
            with open(path, "w") as f:
                f.write(textwrap.dedent(text))
            out = os.path.join(d, "r.json")
            p = mbench("run", "--config", path, "--backend", "cpu", *extra,
                       "--format", "json", "-o", out)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                return json.load(f)["results"]

    def test_w_dequantize_runs_with_its_own_pass(self):
        """gemm_fp8_rowwise_w_dequantize: the scales applied after an f32
        product (explicit_dequant), checked, its bytes counting the f32
        product's round trip."""
        (r,) = self.run_text("""\
            benchmarks:
            - benchmark_name: gemm_fp8_rowwise_w_dequantize
              benchmark_params: [{m: 64, k: 128, n: 32, num_runs: 3}]
            """)
        self.assertEqual(r["status"], "ok", r)
        self.assertTrue(r["correctness"]["pass"], r)
        self.assertTrue(r["params"]["explicit_dequant"], r)
        # bf16 A, B and D, plus the f32 product written and read back
        self.assertEqual(r["derived"]["bytes"],
                         2 * (64 * 128 + 128 * 32 + 64 * 32) + 8 * 64 * 32)

    def test_grouped_query_attention_runs_both_layouts(self):
        """The suite's attention with fewer K/V heads than query heads
        (legacy tokamax_splash_attention's kv_heads, current
        attention_flashed's num_kv_heads) runs as our attention's kv_heads
        and passes the reference check; K and V count Hkv heads in the
        bytes."""
        legacy = """\
            benchmarks:
            - benchmark_name: tokamax_splash_attention
              num_runs: 3
              benchmark_sweep_params:
              - {batch_size: 1, q_seq_len: 32, kv_seq_len: 48, q_heads: 4,
                 kv_heads: 2, qk_head_dim: 16, v_head_dim: 16}
            """
        current = """\
            global: {num_runs: 3, dtype: float32}
            benchmarks:
              - name: attention_flashed
                batch: 1
                num_q_heads: 4
                num_kv_heads: 2
                head_dim: 16
                sweep: {seq_len: [32], causal: [false]}
            """
        expect = {legacy: ("tokamax_splash_attention/"
                           "b1_h4_kvh2_q32_kv48_d16_fwd_causal", 32, 48),
                  current: ("attention_flashed/1x4x32x16/float32/fwd/kv2",
                            32, 32)}
        for text, (name, sq, skv) in expect.items():
            (r,) = self.run_text(text)
            self.assertEqual(r["name"], name)
            self.assertEqual(r["status"], "ok", r)
            self.assertTrue(r["correctness"]["pass"], r)
            self.assertEqual(r["params"]["kv_heads"], 2, r)
            # f32 Q and O of 4 heads, K and V of 2
            self.assertEqual(r["derived"]["bytes"],
                             4 * (2 * 4 * sq * 16 + 2 * 2 * skv * 16))

    def test_attention_backward_runs_both_layouts(self):
        """The suite's attention backward runs as our attention_bwd: the
        current layout's mode bwd, the legacy mode bwd, and the legacy mode
        combined as two entries, the forward then the backward; each
        passes the reference check. The backward's bytes: Q, O, dO, dQ of
        4 heads, K, V, dK, dV of 2, and L."""
        legacy = """\
            benchmarks:
            - benchmark_name: tokamax_splash_attention
              num_runs: 2
              benchmark_sweep_params:
              - {batch_size: 1, q_seq_len: 32, kv_seq_len: 48, q_heads: 4,
                 kv_heads: 2, qk_head_dim: 16, v_head_dim: 16,
                 mode: [bwd, combined]}
            """
        current = """\
            global: {num_runs: 2, dtype: float32}
            benchmarks:
              - name: attention_flashed
                batch: 1
                num_q_heads: 4
                num_kv_heads: 2
                head_dim: 16
                mode: bwd
                sweep: {seq_len: [32]}
            """
        leg = "tokamax_splash_attention/b1_h4_kvh2_q32_kv48_d16_"
        expect = {legacy: [(leg + "bwd_causal", "attention_bwd", 48),
                           (leg + "combined_causal/attention", "attention",
                            48),
                           (leg + "combined_causal/attention_bwd",
                            "attention_bwd", 48)],
                  current: [("attention_flashed/1x4x32x16/float32/bwd/kv2/"
                             "causal", "attention_bwd", 32)]}
        for text, want in expect.items():
            rs = self.run_text(text)
            self.assertEqual([(r["name"], r["op"]) for r in rs],
                             [(n, op) for n, op, _ in want])
            for r, (_, op, skv) in zip(rs, want):
                self.assertEqual(r["status"], "ok", r)
                self.assertTrue(r["correctness"]["pass"], r)
                self.assertEqual(r["params"]["kv_heads"], 2, r)
                if op == "attention_bwd":
                    self.assertEqual(r["derived"]["bytes"],
                                     4 * (4 * 4 * 32 * 16 + 4 * 2 * skv * 16
                                          + 4 * 32), r)

    def test_host_device_runs_both_layouts(self):
        """The suite's host_device (legacy: both directions per size) and
        host_to_device / device_to_host (current) run as h2d and d2h and
        pass their exact check."""
        legacy = """\
            benchmarks:
            - benchmark_name: host_device
              num_runs: 3
              benchmark_sweep_params:
              - {data_size_mib_list: [1, 2]}
            """
        current = """\
            global: {num_runs: 3, dtype: float32}
            benchmarks:
              - name: host_to_device
                sweep: {data_size_mib: [1]}
              - name: device_to_host
                sweep: {data_size_mib: [2]}
            """
        expect = {legacy: ["host_device/1MiB/h2d", "host_device/1MiB/d2h",
                           "host_device/2MiB/h2d", "host_device/2MiB/d2h"],
                  current: ["host_to_device/1/float32/MiB",
                            "device_to_host/2/float32/MiB"]}
        for text, names in expect.items():
            results = self.run_text(text)
            self.assertEqual([r["name"] for r in results], names)
            for r in results:
                self.assertEqual(r["status"], "ok", r)
                self.assertTrue(r["correctness"]["pass"], r)
                self.assertEqual(r["dtypes"]["a"], "f32")
                self.assertEqual(r["shape"]["N"], 128)
                self.assertFalse(r["params"]["pinned"])

    def test_legacy_defined_name_skipped_rest_runs(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "legacy.yaml")
            with open(path, "w") as f:
                f.write(textwrap.dedent("""\
                    benchmarks:
                    - benchmark_name: add
                      benchmark_params: [{m: 64, n: 64, num_runs: 3}]
                    - benchmark_name: numpy_convolve
                      benchmark_sweep_params: [{m: 64, k: 64, n: 64}]
                    """))
            rows = self.dry_rows(path)
            self.assertEqual(len(rows), 2)
            self.assertIn('skipped: benchmark_name "numpy_convolve" (1-D '
                          'convolution, NumPy on the host) is defined by the '
                          'JAX suite but not available in libmicrobench yet',
                          rows[1])
            out = os.path.join(d, "r.json")
            p = mbench("run", "--config", path, "--backend", "cpu",
                       "--format", "json", "-o", out)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                text = f.read()
            self.assertIn('"skipped"', text)
            self.assertIn("numpy_convolve", text)
            f = open(path, "a")
            f.write("- benchmark_name: gemm_mxfp9\n"
                    "  benchmark_params: [{m: 8}]\n")
            f.close()
            p = mbench("run", "--config", path, "--dry-run")
            self.assertEqual(p.returncode, 2)
            self.assertIn('legacy.yaml:6: benchmarks[2].benchmark_name: '
                          'benchmark_name "gemm_mxfp9" is not a benchmark '
                          'of the JAX suite; its benchmarks: all_gather',
                          p.stderr)

    def test_legacy_mxfp8_runs_and_passes(self):
        """gemm_mxfp8_b32 and its static form run as MXFP8 (e8m0 scales, 1x32
        / 32x1 blocks) and pass their check."""
        results = self.run_text("""\
            benchmarks:
            - benchmark_name: gemm_mxfp8_b32
              benchmark_sweep_params: [{m: 64, k: 128, n: 96}]
            - benchmark_name: gemm_mxfp8_b32_static_scaling
              benchmark_sweep_params: [{m: 32, k: 64, n: 32}]
            """, "--samples", "3")
        self.assertEqual(len(results), 2)
        for r in results:
            self.assertEqual(r["status"], "ok", r.get("reason"))
            self.assertTrue(r["correctness"]["pass"])
            self.assertEqual(r["params"]["scale_dtype"], "e8m0")
            self.assertEqual(r["params"]["scale_a"]["block"], [1, 32])
            self.assertEqual(r["params"]["scale_b"]["block"], [32, 1])
        self.assertEqual(results[1]["params"]["scale"], 0.5)

    def test_legacy_fp8_elementwise_runs_and_passes(self):
        """Issue 23 item 5: the suite's sigmoid_fp8, silu_mul_fp8 and
        add_fp8 (dtype "float8" = float8_e4m3fn) run on the CPU, checked,
        the output kept in e4m3 and counted as one byte an element, as the
        suite counts (2 MN for sigmoid, 3 MN for the others)."""
        path = os.path.join(CONFIGS, "jax", "inference_fp8.yaml")
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            # The file's csv_path is relative: keep what it writes in d.
            p = mbench("run", "--config", path, "--backend", "cpu",
                       "--format", "json", "-o", out, cwd=d)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                doc = json.load(f)
        results = doc["results"] if isinstance(doc, dict) else doc
        want = {"inference_sigmoid": ("activation", 2),
                "inference_silu_mul": ("silu_mul", 3),
                "inference_add": ("add", 3)}
        self.assertEqual(len(results), 3)
        for r in results:
            bench = r["name"].split("/")[0]
            op, per_elem = want[bench]
            self.assertEqual(r["status"], "ok", r.get("reason"))
            self.assertEqual(r["op"], op)
            self.assertEqual(r["dtypes"]["a"], "f8e4m3")
            self.assertEqual(r["dtypes"]["out"], "f8e4m3")
            self.assertTrue(r["correctness"]["checked"], bench)
            self.assertTrue(r["correctness"]["pass"], bench)
            self.assertEqual(r["derived"]["bytes"], per_elem * 64 * 128)

    def test_current_layout_runs_on_cpu(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            p = mbench("run", "--config",
                       os.path.join(CONFIGS, "jax", "tiny_sweep.yaml"),
                       "--backend", "cpu", "--format", "json", "-o", out)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                doc = json.load(f)
            results = doc["results"] if isinstance(doc, dict) else doc
            self.assertEqual(len(results), 21)
            status = [r.get("status") for r in results]
            # all_reduce and rope's odd head_dim; host_to_device (h2d) and
            # hbm_bandwidth's triad run
            self.assertEqual(status.count("skipped"), 2, status)
            self.assertEqual(status.count("ok"), 19, status)


FIXTURES = os.environ.get("MB_TEST_FIXTURE_DIR", "")


@unittest.skipUnless(FIXTURES, "MB_TEST_FIXTURE_DIR not set")
class NothingMeasured(unittest.TestCase):
    """A plan whose backend has no device: --dry-run says so, the run exits
    3, and the files it would write keep an earlier run's results."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def mbench(self, *args):
        e = dict(os.environ)
        e["MB_BACKEND_PATH"] = os.path.join(FIXTURES, "nodevice")
        return subprocess.run([MBENCH, *args], capture_output=True,
                              text=True, env=e, timeout=600)

    def plan(self, backends):
        path = os.path.join(self.dir, "p.yaml")
        with open(path, "w") as f:
            f.write("benchmarks:\n")
            for b in backends:
                f.write(f"  - name: on_{b}\n    op: gemm\n"
                        f"    shapes: [[16, 16, 16]]\n    backend: {b}\n"
                        f"    timing: {{samples: 3}}\n")
        return path

    def test_dry_run_predicts_skip(self):
        p = self.mbench("run", "--config", self.plan(["nodevice", "cpu"]),
                        "--dry-run")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = {l.split()[1]: l for l in p.stdout.splitlines()[1:-1]}
        self.assertIn('skipped: backend "nodevice" has no device: no fake '
                      'device', lines["on_nodevice/16x16x16/f32"])
        self.assertTrue(lines["on_cpu/16x16x16/f32"].endswith("  cpu"))
        self.assertNotIn("would measure nothing", p.stderr)
        self.assertIn("1 benchmark would be skipped for want of a device; "
                      "--backend cpu runs every benchmark on the CPU",
                      p.stderr)
        p = self.mbench("run", "--config", self.plan(["nodevice"]),
                        "--dry-run")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("would measure nothing (exit 3); --backend cpu runs "
                      "them on the CPU", p.stderr)
        p = self.mbench("run", "--config", self.plan(["cpu"]), "--dry-run")
        self.assertNotIn("--backend cpu", p.stderr)

    def test_all_skipped_exit_3_keeps_outputs(self):
        out = os.path.join(self.dir, "r.json")
        with open(out, "w") as f:
            f.write("earlier\n")
        p = self.mbench("run", "--config", self.plan(["nodevice"]), "-o", out)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("nothing was measured", p.stderr)
        self.assertIn("has no device", p.stderr)
        self.assertIn("--backend cpu", p.stderr)
        self.assertIn(f"{out} left as it was", p.stderr)
        with open(out) as f:
            self.assertEqual(f.read(), "earlier\n")

    def test_all_skipped_keeps_config_csv(self):
        path = os.path.join(self.dir, "jax.yaml")
        csv_dir = os.path.join(self.dir, "csv")
        os.makedirs(csv_dir)
        with open(path, "w") as f:
            f.write(textwrap.dedent(f"""\
                benchmarks:
                - benchmark_name: "add"
                  csv_path: "{csv_dir}"
                  benchmark_sweep_params:
                    - {{ m: 64, n: 64, num_runs: 3 }}
                """))
        out = os.path.join(csv_dir, "add.csv")
        with open(out, "w") as f:
            f.write("earlier\n")
        p = self.mbench("run", "--config", path, "--backend", "nodevice")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn(f"{out} left as it was", p.stderr)
        with open(out) as f:
            self.assertEqual(f.read(), "earlier\n")

    def test_mixed_run_writes_all(self):
        # One measured result: exit 0, and the file gets the skip too, in
        # order.
        out = os.path.join(self.dir, "r.json")
        with open(out, "w") as f:
            f.write("earlier\n")
        p = self.mbench("run", "--config", self.plan(["nodevice", "cpu"]),
                        "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            rs = json.load(f)["results"]
        self.assertEqual([r["status"] for r in rs], ["skipped", "ok"])
        self.assertEqual([r["backend"] for r in rs], ["nodevice", "cpu"])


if __name__ == "__main__":
    unittest.main()
