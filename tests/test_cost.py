"""Prices and the cost model: hand-computed cases, overrides, staleness, validation errors."""
from __future__ import annotations

from datetime import date

import pytest

from gpukit import cost, prices
from gpukit.errors import DataError, ParameterError

TODAY = date(2026, 11, 29)


def test_arithmetic_by_hand():
    assert cost.usd_per_tflop(1600.0, 80.0) == 20.0
    assert cost.usd_per_tflop(None, 80.0) is None and cost.usd_per_tflop(1600.0, None) is None
    # 300 W for 3 years at half the hours, $0.10/kWh, PUE 1.5: 0.3 kW x 13149 h x 0.1 x 1.5
    assert cost.energy_usd(300, 3, 0.5, 0.10, 1.5) == pytest.approx(0.3 * 8766 * 3 * 0.5 * 0.10 * 1.5)
    assert cost.tco_usd(4000, 300, 3, 0.5, 0.10, 1.5) == pytest.approx(4000 + 591.705)
    assert cost.tco_usd(None, 300, 3, 0.5, 0.1) is None
    # Renting at $1.30/h vs powering at 0.3 kW x $0.10 = $0.03/h: saves $1.27 per used hour;
    # 730.5 h a month at 50% -> 365.25 h -> $463.87 a month -> $4000 pays back in 8.62 months.
    assert cost.break_even_months(4000, 1.30, 300, 0.5, 0.10) == pytest.approx(4000 / (1.27 * 365.25))
    assert cost.break_even_months(4000, 0.02, 300, 0.5, 0.10) is None  # renting is cheaper than power
    assert cost.break_even_months(None, 1.3, 300, 0.5, 0.1) is None
    assert cost.usd_per_million_items(3.6, 1000) == pytest.approx(1.0)  # $3.60/h at 1000 items/s
    assert cost.usd_per_million_items(3.6, None) is None


def test_shipped_prices_are_sourced_and_dated():
    book = prices.load_prices(today=TODAY)
    for frame in (book.purchase, book.cloud):
        assert len(frame) and frame["source_url"].str.startswith("https://").all()
        assert frame["date"].notna().all()
    assert set(book.purchase["kind"]) <= set(prices.PRICE_KINDS)
    assert not book.purchase.loc[book.purchase["kind"] == "msrp", "stale"].any()  # launch prices never go stale


def test_cost_table_values(tmp_path, gpu):
    mine = tmp_path / "mine.csv"
    mine.write_text("gpu,kind,usd,date,source_url,note\n"
                    "A40,street,4500,2026-11-01,https://example.com/quote,our reseller's quote\n")
    book = prices.load_prices([mine], today=TODAY)
    table = cost.cost_table(book, ["A40", "V100"], ["fp32", "tf32", "fp16"], electricity_usd_per_kwh=0.2, years=2,
                            utilization=0.25, pue=1.0)
    a40 = table[(table["gpu"] == "A40")].set_index("precision")
    fp32, fp16, tdp_w = gpu("A40").fp32_tflops, gpu("A40").fp16_tensor_tflops, gpu("A40").tdp_w
    assert a40.loc["fp32", "usd_per_tflop"] == pytest.approx(4500 / fp32)
    assert a40.loc["fp16", "usd_per_tflop"] == pytest.approx(4500 / fp16)
    energy = tdp_w / 1000 * 8766 * 2 * 0.25 * 0.2
    assert a40.loc["fp32", "tco_usd"] == pytest.approx(4500 + energy)
    assert a40.loc["fp32", "tflops_per_watt"] == pytest.approx(fp32 / tdp_w)
    cheapest = book.cloud[book.cloud["gpu"] == "A40"]["usd_per_hour"].min()
    assert a40.loc["fp32", "cloud_usd_per_hour"] == cheapest
    assert a40.loc["fp16", "cloud_usd_per_tflop_hour"] == pytest.approx(cheapest / fp16)
    v100 = table[table["gpu"] == "V100 PCIe 16GB"].set_index("precision")
    assert v100.loc["tf32", "peak_tflops"] is None or v100["peak_tflops"].isna()["tf32"]
    assert "Volta has no tf32 mode" in v100.loc["tf32", "note"]
    assert "no purchase price" in v100.loc["fp32", "note"] and v100["price_usd"].isna().all()


def test_cost_per_unit_of_work_uses_measurements_over_predictions(tmp_path, gpu):
    import pandas as pd

    mine = tmp_path / "mine.csv"
    mine.write_text("gpu,kind,usd,date,source_url,note\n"
                    "A40,street,4500,2026-11-01,https://example.com/quote,\n")
    rent = tmp_path / "rent.csv"
    rent.write_text("gpu,provider,offering,gpus_per_offering,usd_per_hour,date,source_url,note\n"
                    "A40,Cheap,a40x1,1,0.36,2026-11-01,https://example.com/rent,\n")
    book = prices.load_prices([mine, rent], today=TODAY)
    work = pd.DataFrame({"gpu": ["A40", "V100 PCIe 16GB"], "throughput": [500.0, 800.0],
                         "throughput_unit": ["images/s"] * 2, "measured_throughput": [400.0, None]})
    table = cost.work_cost_table(book, work, electricity_usd_per_kwh=0.2, years=2, utilization=0.25).set_index("gpu")
    a40 = table.loc["A40"]
    assert a40["basis"] == "measured" and a40["throughput"] == 400.0
    # $0.36/h at 400 images/s: 1.44 M images an hour -> $0.25 per million
    assert a40["cloud_usd_per_million_items"] == pytest.approx(0.25)
    hours = 8766 * 2 * 0.25
    owned = (4500 + gpu("A40").tdp_w / 1000 * hours * 0.2) / hours
    assert a40["owned_usd_per_hour"] == pytest.approx(owned)
    assert a40["owned_usd_per_million_items"] == pytest.approx(owned / (400 * 3600) * 1e6)
    v100 = table.loc["V100 PCIe 16GB"]
    assert v100["basis"] == "predicted" and v100["throughput"] == 800.0
    assert v100["owned_usd_per_million_items"] != v100["owned_usd_per_million_items"] or \
        v100["owned_usd_per_million_items"] is None  # no purchase price: no number


def test_user_prices_override_shipped_rows(tmp_path):
    mine = tmp_path / "cloud.csv"
    mine.write_text("gpu,provider,offering,gpus_per_offering,usd_per_hour,date,source_url,note\n"
                    "RTX A4000,RunPod,serverless flex worker (A4000/A4500/RTX 4000 tier),1,0.25,2026-11-20,"
                    "https://example.com/q,negotiated\n"
                    "nvidia a40,OurCloud,a40.large,4,0.9,2026-11-20,https://example.com/q,\n")
    book = prices.load_prices(mine, today=TODAY)
    a4000 = book.cloud[(book.cloud["gpu"] == "RTX A4000") & (book.cloud["provider"] == "RunPod")]
    assert list(a4000["usd_per_hour"]) == [0.25]  # replaced, not duplicated
    assert "A40" in set(book.cloud.loc[book.cloud["provider"] == "OurCloud", "gpu"])  # name resolved
    table = cost.cost_table(book, ["A40"], ["fp32"], price_kind="cloud", cloud="OurCloud")
    assert table["cloud_usd_per_hour"].item() == 0.9 and table["price_usd"].isna().all()


def test_stale_prices_are_flagged_not_hidden(tmp_path):
    old = tmp_path / "old.csv"
    old.write_text("gpu,kind,usd,date,source_url,note\n"
                   "RTX A5000,street,2000,2024-01-15,https://example.com/old,\n")
    book = prices.load_prices([old], max_age_days=365, today=TODAY)
    row = book.purchase[book.purchase["gpu"] == "RTX A5000"].iloc[0]
    assert row["stale"] and row["age_days"] == (TODAY - date(2024, 1, 15)).days
    assert "RTX A5000" in set(book.stale()["gpu"])
    table = cost.cost_table(book, ["A5000"], ["fp32"])
    assert table["price_usd"].item() == 2000 and table["stale"].item()
    assert "purchase price is stale (2024-01-15)" in table["note"].item()


@pytest.mark.parametrize("content, expected", [
    ("gpu,kind,usd,date,source_url,note\nA4500,street,900,2026-01-01,https://x.com/a,\n",
     ["line 2 (A4500), column gpu: unknown GPU 'A4500'; did you mean"]),
    ("gpu,kind,usd,date,source_url,note\nA40,retail,900,2026-01-01,https://x.com/a,\n",
     ["line 2 (A40), column kind: 'retail' is not one of msrp, street, used"]),
    ("gpu,kind,usd,date,source_url,note\nA40,street,$900,2026-01-01,https://x.com/a,\n",
     ["column usd: '$900' is not a number"]),
    ("gpu,kind,usd,date,source_url,note\nA40,street,900,01/02/2026,https://x.com/a,\n", ["column date", "YYYY-MM-DD"]),
    ("gpu,kind,usd,date,source_url,note\nA40,street,900,2026-01-01,,\n", ["column source_url: is empty"]),
    ("gpu,kind,usd,date,source_url,note\nA40,street,900,2026-01-01,https://x.com/a,\nnvidia a40,street,950,"
     "2026-02-01,https://x.com/b,\n", ["line 3 (A40): repeats line 2 (same gpu, kind)"]),
    ("gpu,price\nA40,900\n", ["is neither a purchase price file", "fix its header"]),
    ("gpu,provider,offering,gpus_per_offering,usd_per_hour,date,source_url,note\n"
     "A40,X,y,0,1.0,2026-01-01,https://x.com/a,\n", ["column gpus_per_offering: 0 is out of range"]),
])
def test_bad_price_files_name_line_column_and_fix(tmp_path, content, expected):
    path = tmp_path / "p.csv"
    path.write_text(content)
    with pytest.raises(DataError) as info:
        prices.load_prices(path, today=TODAY)
    msg = str(info.value)
    assert "\n" not in msg and "p.csv" in msg
    for part in expected:
        assert part in msg, msg


@pytest.mark.parametrize("kwargs, message", [
    ({"price_kind": "retail"}, "price kind 'retail'"), ({"utilization": 1.5}, "utilization 1.5 is out of range"),
    ({"years": 0}, "years 0 is out of range"), ({"pue": 0.5}, "PUE 0.5 is out of range"),
    ({"electricity_usd_per_kwh": -1}, "electricity price"),
])
def test_out_of_range_parameters(kwargs, message):
    with pytest.raises(ParameterError, match=message):
        cost.cost_table(prices.load_prices(today=TODAY), ["A40"], **kwargs)


def test_pareto_front():
    import pandas as pd

    frame = pd.DataFrame({"gpu": list("abcd"), "usd": [1.0, 2.0, 3.0, 2.5], "tflops": [10.0, 5.0, 30.0, 20.0]})
    assert list(cost.pareto_front(frame, "usd", "tflops")["gpu"]) == ["a", "d", "c"]


def test_cost_command(capsys):
    from gpukit import cli

    code = cli.main(["cost", "--gpu", "rtx 3090", "--precision", "fp16", "--format", "csv"])
    out = capsys.readouterr().out
    assert code == 0
    header = out.splitlines()[0].split(",")
    for col in ("gpu", "precision", "peak_tflops", "price_kind", "price_usd", "price_date", "usd_per_tflop",
                "tco_usd", "tco_usd_per_tflop", "cloud_usd_per_hour", "cloud_usd_per_tflop_hour", "tflops_per_watt"):
        assert col in header
    code = cli.main(["cost", "--utilization", "2"])
    err = capsys.readouterr().err
    assert code == 2 and "utilization 2.0 is out of range" in err
