"""Fact-checking: verdicts computed from the catalogue, explanations, and bad claim files."""
from __future__ import annotations

from pathlib import Path

import pytest

from gpukit import claims
from gpukit.errors import DataError

HEADER = "source,gpu,field,relation,claimed_value,other_gpu,quote\n"


def check_text(tmp_path: Path, body: str):
    path = tmp_path / "claims.csv"
    path.write_text(HEADER + body)
    return claims.check(claims.load_claims(path))


def test_the_three_kinds_of_error_the_articles_make(tmp_path):
    t = check_text(tmp_path,
                   "a.txt,RTX A5000,fp16_tensor_tflops,eq,222.2,,sparse passed off as dense\n"
                   "b.txt,A40,fp32_tflops,eq,19.2,,another card's FP32 figure\n"
                   "c.txt,GeForce RTX 4090,tensor_cores,eq,128,,wrong tensor-core count\n")
    assert list(t["verdict"]) == ["wrong", "wrong", "wrong"]
    assert "2:4-sparse" in t.loc[0, "note"] and "111.1" in t.loc[0, "note"]
    assert "RTX A4000's fp32_tflops" in t.loc[1, "note"] and t.loc[1, "catalogue_value"] == "37.4"
    assert t.loc[2, "catalogue_value"] == "512"


def test_variants_make_a_claim_unclear_or_confirmed(tmp_path):
    t = check_text(tmp_path,
                   "a.txt,V100,fp32_tflops,eq,14,,V100 gives 14 TFLOPS\n"
                   "a.txt,V100,memory_bandwidth_gbs,eq,900,,every V100 has 900 GB/s\n"
                   "a.txt,V100 SXM2 32GB,fp32_tflops,eq,15.7,,\"a named variant, exactly\"\n"
                   "a.txt,A100,memory_gb,max,80,,up to 80 GB\n"
                   "a.txt,A100,memory_gb,max,40,,up to 40 GB\n"
                   "a.txt,GeForce RTX 4090,memory_bandwidth_gbs,eq,1000,,1 TB/s\n")
    assert list(t["verdict"]) == ["unclear", "confirmed", "confirmed", "confirmed", "wrong", "confirmed"]
    assert t.loc[0, "note"] == "true for V100 PCIe 16GB only"
    assert "15.7 (V100 SXM2 16GB, V100 SXM2 32GB)" in t.loc[0, "catalogue_value"]
    assert t.loc[5, "note"] == "rounded"  # 1000 vs 1008, within 1 %


def test_comparisons_between_gpus_and_with_a_value(tmp_path):
    t = check_text(tmp_path,
                   "a.txt,V100,cuda_cores,gt,,A40,V100 has more CUDA cores\n"
                   "a.txt,RTX A5000,tdp_w,gt,,RTX A4000,A5000 draws more\n"
                   "a.txt,V100,nvlink_gbs,gt,0,,V100 has NVLink\n"
                   "a.txt,A40,memory_gb,lt,,V100,A40 has less memory\n")
    assert list(t["verdict"]) == ["wrong", "confirmed", "unclear", "wrong"]
    assert t.loc[0, "note"] == "the reverse holds"
    assert t.loc[2, "note"] == "true for V100 SXM2 16GB, V100 SXM2 32GB only"


def test_shipped_claims_cover_every_article_and_find_the_known_errors():
    t = claims.check()
    seeds = Path(__file__).resolve().parents[2] / "shared" / "seeds"
    if seeds.is_dir():  # the articles live beside the repository in the team's checkout
        assert set(t["source"]) <= {p.name for p in seeds.iterdir()}
    assert t["source"].nunique() == 4
    wrong = t[t["verdict"] == "wrong"]
    assert {("RTX A5000", "fp16_tensor_tflops"), ("RTX A4000", "fp16_tensor_tflops"), ("A40", "fp32_tflops"),
            ("GeForce RTX 4090", "tensor_cores")} <= set(zip(wrong["gpu"], wrong["field"]))
    assert set(t["verdict"]) == set(claims.VERDICTS)
    s = claims.summary(t)
    assert int(s[list(claims.VERDICTS)].to_numpy().sum()) == len(t)


@pytest.mark.parametrize("body, column, message", [
    ("a.txt,Z9000,memory_gb,eq,16,,x\n", "gpu", "Z9000"),
    ("a.txt,A40,memory_size,eq,16,,x\n", "field", "memory_size"),
    ("a.txt,A40,memory_gb,eq,,,x\n", "claimed_value", "needs the claimed value"),
    ("a.txt,A40,memory_gb,gt,16,V100,x\n", "other_gpu", "exactly one"),
    ("a.txt,A40,memory_bandwidth_gbs,eq,1 TB/s,,x\n", "claimed_value", "not a number"),
])
def test_bad_claim_files_name_line_column_and_fix(tmp_path, body, column, message):
    path = tmp_path / "claims.csv"
    path.write_text(HEADER + body)
    with pytest.raises(DataError) as info:
        claims.load_claims(path)
    text = str(info.value)
    assert "claims.csv" in text and "line 2" in text and column in text and message in text
