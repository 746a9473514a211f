"""Ops, aliases, recipes and models: constant data read from the library."""
import unittest

import microbench


class CatalogTest(unittest.TestCase):
    def test_ops(self):
        ops = {o["name"]: o for o in microbench.list_ops()}
        gemm = ops["gemm"]
        self.assertEqual(gemm["rank"], 3)
        self.assertEqual(gemm["shape"], "MxKxN")
        self.assertIn("f32", gemm["dtypes"])
        self.assertIn("bf16", gemm["dtypes"])
        self.assertFalse(gemm["composite"])
        self.assertEqual(ops["add"]["inputs"], ["X", "Y"])
        self.assertEqual(ops["add"]["outputs"], ["Z"])
        self.assertTrue(ops["linear"]["composite"])
        for o in ops.values():
            with self.subTest(op=o["name"]):
                self.assertEqual(len(o["shape"].split("x")), o["rank"])
                self.assertTrue(o["summary"])

    def test_aliases(self):
        aliases = {a["name"]: a for a in microbench.list_aliases()}
        self.assertEqual(aliases["gemm_fp8_rowwise"]["op"], "gemm")
        ops = {o["name"] for o in microbench.list_ops()}
        for a in aliases.values():
            self.assertIn(a["op"], ops)

    def test_recipes(self):
        recipes = {r["name"]: r for r in microbench.list_recipes()}
        self.assertIn("baseline", recipes)
        self.assertIn("float8dq-row", recipes)
        self.assertTrue(recipes["int8dq"]["trains"])
        self.assertFalse(recipes["int8wo"]["trains"])
        self.assertGreater(recipes["int8wo"]["min_sqnr_db"], 0)

    def test_models(self):
        models = {m["name"]: m for m in microbench.list_models()}
        self.assertEqual(models["linear"]["modes"], ["inference", "training"])
        self.assertEqual(models["ln_linear_gelu"]["modes"], ["inference"])
        self.assertIn("transformer_block", models)


if __name__ == "__main__":
    unittest.main()
