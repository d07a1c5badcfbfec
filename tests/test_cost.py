"""Prices and the cost model: hand-computed cases, overrides, staleness, validation errors."""

from __future__ import annotations

from datetime import date

import pytest

from gpukit.errors import DataError, ParameterError
from gpukit.prices import book as prices
from gpukit.prices import cost
from gpukit.specs import matmul_rates

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
    assert not book.purchase.loc[
        book.purchase["kind"] == "msrp", "stale"
    ].any()  # launch prices never go stale


def test_cost_table_values(tmp_path, gpu):
    mine = tmp_path / "mine.csv"
    mine.write_text(
        "gpu,kind,usd,date,source_url,note\n"
        "A40,street,4500,2026-11-01,https://example.com/quote,our reseller's quote\n"
    )
    book = prices.load_prices([mine], today=TODAY)
    table = cost.cost_table(
        book,
        ["A40", "V100"],
        ["fp32", "tf32", "fp16"],
        "street",  # the quote's kind ("any" would take a cheaper used price where one holds)
        electricity_usd_per_kwh=0.2,
        years=2,
        utilization=0.25,
        pue=1.0,
    )
    a40 = table[(table["gpu"] == "A40")].set_index("precision")
    fp32, fp16, tdp_w = gpu("A40").fp32_tflops, gpu("A40").fp16_tensor_tflops, gpu("A40").tdp_w
    assert a40.loc["fp32", "usd_per_tflop"] == pytest.approx(4500 / fp32)
    assert a40.loc["fp16", "usd_per_tflop"] == pytest.approx(4500 / fp16)
    energy = tdp_w / 1000 * 8766 * 2 * 0.25 * 0.2
    assert a40.loc["fp32", "tco_usd"] == pytest.approx(4500 + energy)
    assert a40.loc["fp32", "tflops_per_watt"] == pytest.approx(fp32 / tdp_w)
    on_demand = book.current().cloud
    on_demand = on_demand[(on_demand["gpu"] == "A40") & (on_demand["kind"] == "on-demand")]["usd_per_hour"]
    if len(on_demand):
        # the market's rate by default: the median of the fresh offers, with their number and range
        fresh = on_demand[~book.current().cloud.loc[on_demand.index, "stale"]]
        pool = fresh if len(fresh) else on_demand
        assert a40.loc["fp32", "cloud_usd_per_hour"] == pytest.approx(pool.median())
        assert a40.loc["fp16", "cloud_usd_per_tflop_hour"] == pytest.approx(pool.median() / fp16)
        providers = book.current().cloud.loc[pool.index, "provider"].nunique()
        assert a40.loc["fp32", "cloud_provider"] == (
            f"median of {len(pool)} offers from {providers} providers (${pool.min():.2f}-${pool.max():.2f})"
            if len(pool) > 1
            else book.current().cloud.loc[pool.index[0], "provider"]
        )
    else:
        assert (
            a40["cloud_usd_per_hour"].isna().all() and "no on-demand cloud price" in a40.loc["fp32", "note"]
        )
    # the A40's tensor cores at the one published run's share (119.18 of 149.7 TFLOPS FP16, applied to
    # TF32 too: the same tensor cores and clock); its CUDA-core FP32 at the datasheet
    share = 119.18 / 149.7
    assert a40.loc["fp16", "sustained_tflops"] == pytest.approx(fp16 * share)
    assert a40.loc["tf32", "sustained_tflops"] == pytest.approx(gpu("A40").tf32_tensor_tflops * share)
    assert a40.loc["fp16", "usd_per_sustained_tflop"] == pytest.approx(4500 / (fp16 * share))
    assert (
        a40.loc["fp32", "sustained_tflops"] == fp32
        and a40.loc["fp32", "usd_per_sustained_tflop"] == 4500 / fp32
    )
    assert list(a40["sustained_basis"]) == ["datasheet (CUDA cores)", "measured", "measured"]
    v100 = table[table["gpu"] == "V100 PCIe 16GB"].set_index("precision")
    # no published run names the V100 PCIe: its FP16 at the median share of the measured GPUs
    assert v100.loc["fp16", "sustained_basis"] == "median share"
    assert v100.loc["fp16", "sustained_tflops"] == pytest.approx(
        gpu("V100 PCIe 16GB").fp16_tensor_tflops * matmul_rates.typical_share(matmul_rates.rates())
    )
    assert v100.loc["tf32", "peak_tflops"] is None or v100["peak_tflops"].isna()["tf32"]
    assert "Volta has no tf32 mode" in v100.loc["tf32", "note"]
    if book.purchase[book.purchase["gpu"] == "V100 PCIe 16GB"].empty:
        assert "no purchase price" in v100.loc["fp32", "note"] and v100["price_usd"].isna().all()


def test_cost_per_unit_of_work_uses_measurements_over_predictions(tmp_path, gpu):
    import pandas as pd

    mine = tmp_path / "mine.csv"
    mine.write_text(
        "gpu,kind,usd,date,source_url,note\nA40,street,4500,2026-11-01,https://example.com/quote,\n"
    )
    rent = tmp_path / "rent.csv"
    rent.write_text(
        "gpu,provider,offering,gpus_per_offering,usd_per_hour,date,source_url,note\n"
        "A40,Cheap,a40x1,1,0.36,2026-11-01,https://example.com/rent,\n"
    )
    book = prices.load_prices([mine, rent], today=TODAY)
    work = pd.DataFrame(
        {
            "gpu": ["A40", "H100 NVL"],
            "throughput": [500.0, 800.0],
            "throughput_unit": ["images/s"] * 2,
            "measured_throughput": [400.0, None],
        }
    )
    table = cost.work_cost_table(
        book, work, "street", electricity_usd_per_kwh=0.2, years=2, utilization=0.25, cloud="cheapest"
    ).set_index("gpu")
    a40 = table.loc["A40"]
    assert a40["basis"] == "measured" and a40["throughput"] == 400.0
    # $0.36/h at 400 images/s: 1.44 M images an hour -> $0.25 per million
    assert a40["cloud_usd_per_million_items"] == pytest.approx(0.25)
    hours = 8766 * 2 * 0.25
    owned = (4500 + gpu("A40").tdp_w / 1000 * hours * 0.2) / hours
    assert a40["owned_usd_per_hour"] == pytest.approx(owned)
    assert a40["owned_usd_per_million_items"] == pytest.approx(owned / (400 * 3600) * 1e6)
    nvl = table.loc["H100 NVL"]
    assert nvl["basis"] == "predicted" and nvl["throughput"] == 800.0
    assert (
        nvl["owned_usd_per_million_items"] != nvl["owned_usd_per_million_items"]
        or nvl["owned_usd_per_million_items"] is None
    )  # no purchase price: no number


def test_user_prices_override_shipped_rows(tmp_path):
    mine = tmp_path / "cloud.csv"
    mine.write_text(
        "gpu,provider,offering,kind,gpus_per_offering,usd_per_hour,date,source_url,note\n"
        "RTX A4000,RunPod,serverless flex worker (A4000/A4500/RTX 4000 tier),serverless,1,0.25,"
        "2026-11-20,https://example.com/q,negotiated\n"
        "nvidia a40,OurCloud,a40.large,on-demand,4,0.9,2026-11-20,https://example.com/q,\n"
    )
    book = prices.load_prices(mine, today=TODAY)
    a4000 = book.cloud[
        (book.cloud["gpu"] == "RTX A4000")
        & (book.cloud["provider"] == "RunPod")
        & (book.cloud["kind"] == "serverless")
    ]
    assert list(a4000["usd_per_hour"]) == [0.25]  # replaced, not duplicated
    assert "A40" in set(book.cloud.loc[book.cloud["provider"] == "OurCloud", "gpu"])  # name resolved
    table = cost.cost_table(book, ["A40"], ["fp32"], price_kind="cloud", cloud="OurCloud")
    assert table["cloud_usd_per_hour"].item() == 0.9 and table["price_usd"].isna().all()


def test_stale_prices_are_flagged_not_hidden(tmp_path):
    old = tmp_path / "old.csv"
    old.write_text(
        "gpu,kind,usd,date,source_url,note\nRTX A5000,street,2000,2024-01-15,https://example.com/old,\n"
    )
    book = prices.load_prices([old], max_age_days=365, today=TODAY)
    row = book.purchase[(book.purchase["gpu"] == "RTX A5000") & (book.purchase["kind"] == "street")].iloc[0]
    assert row["stale"] and row["age_days"] == (TODAY - date(2024, 1, 15)).days
    assert "RTX A5000" in set(book.stale()["gpu"])
    table = cost.cost_table(book, ["A5000"], ["fp32"], price_kind="street")
    assert table["price_usd"].item() == 2000 and table["stale"].item()
    assert "purchase price is stale (2024-01-15)" in table["note"].item()


@pytest.mark.parametrize(
    "content, expected",
    [
        (
            "gpu,kind,usd,date,source_url,note\nA4600,street,900,2026-01-01,https://x.com/a,\n",
            ["line 2 (A4600), column gpu: unknown GPU 'A4600'; did you mean"],
        ),
        (
            "gpu,kind,usd,date,source_url,note\nA40,retail,900,2026-01-01,https://x.com/a,\n",
            ["line 2 (A40), column kind: 'retail' is not one of msrp, street, used"],
        ),
        (
            "gpu,kind,usd,date,source_url,note\nA40,street,$900,2026-01-01,https://x.com/a,\n",
            ["column usd: '$900' is not a number"],
        ),
        (
            "gpu,kind,usd,date,source_url,note\nA40,street,900,01/02/2026,https://x.com/a,\n",
            ["column date", "YYYY-MM-DD"],
        ),
        ("gpu,kind,usd,date,source_url,note\nA40,street,900,2026-01-01,,\n", ["column source_url: is empty"]),
        (
            "gpu,kind,usd,date,source_url,note\nA40,street,900,2026-01-01,https://x.com/a,\nnvidia a40,street,950,"
            "2026-01-01,https://x.com/b,\n",
            ["line 3 (A40): repeats line 2 (same gpu, kind, date)"],
        ),
        (
            "gpu,provider,offering,kind,gpus_per_offering,usd_per_hour,date,source_url,note\n"
            "A40,X,y,reserved,1,1.0,2026-01-01,https://x.com/a,\n",
            ["column kind: 'reserved' is not one of on-demand, spot, serverless"],
        ),
        ("gpu,price\nA40,900\n", ["is neither a purchase price file", "fix its header"]),
        (
            "gpu,provider,offering,gpus_per_offering,usd_per_hour,date,source_url,note\n"
            "A40,X,y,0,1.0,2026-01-01,https://x.com/a,\n",
            ["column gpus_per_offering: 0 is out of range"],
        ),
    ],
)
def test_bad_price_files_name_line_column_and_fix(tmp_path, content, expected):
    path = tmp_path / "p.csv"
    path.write_text(content)
    with pytest.raises(DataError) as info:
        prices.load_prices(path, today=TODAY)
    msg = str(info.value)
    assert "\n" not in msg and "p.csv" in msg
    for part in expected:
        assert part in msg, msg


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"price_kind": "retail"}, "price kind 'retail'"),
        ({"utilization": 1.5}, "utilization 1.5 is out of range"),
        ({"years": 0}, "years 0 is out of range"),
        ({"pue": 0.5}, "PUE 0.5 is out of range"),
        ({"electricity_usd_per_kwh": -1}, "electricity price"),
    ],
)
def test_out_of_range_parameters(kwargs, message):
    with pytest.raises(ParameterError, match=message):
        cost.cost_table(prices.load_prices(today=TODAY), ["A40"], **kwargs)


def test_pareto_front():
    import pandas as pd

    frame = pd.DataFrame(
        {"gpu": list("abcd"), "usd": [1.0, 2.0, 3.0, 2.5], "tflops": [10.0, 5.0, 30.0, 20.0]}
    )
    assert list(cost.pareto_front(frame, "usd", "tflops")["gpu"]) == ["a", "d", "c"]


def test_cost_command(capsys):
    from gpukit import cli

    code = cli.main(["cost", "--gpu", "rtx 3090", "--precision", "fp16", "--format", "csv"])
    out = capsys.readouterr().out
    assert code == 0
    header = out.splitlines()[0].split(",")
    for col in (
        "gpu",
        "precision",
        "peak_tflops",
        "price_kind",
        "price_usd",
        "price_date",
        "usd_per_tflop",
        "tco_usd",
        "tco_usd_per_tflop",
        "cloud_usd_per_hour",
        "cloud_usd_per_tflop_hour",
        "tflops_per_watt",
    ):
        assert col in header
    code = cli.main(["cost", "--utilization", "2"])
    err = capsys.readouterr().err
    assert code == 2 and "utilization 2.0 is out of range" in err


# --------------------------------------------------------------------------- histories, kinds, as-of

HISTORY = (
    "gpu,kind,usd,date,source_url,note\n"
    "RTX A5000,street,2400,2022-03-01,https://example.com/a,\n"
    "RTX A5000,street,2100,2023-06-01,https://example.com/b,\n"
    "RTX A5000,street,1700,2025-01-01,https://example.com/c,\n"
    "RTX A5000,msrp,2250,2021-04-12,https://example.com/launch,\n"
)
CLOUD = (
    "gpu,provider,offering,kind,gpus_per_offering,usd_per_hour,date,source_url,note\n"
    "RTX A5000,Cheap,worker,serverless,1,0.10,2026-11-01,https://example.com/s,per second\n"
    "RTX A5000,Cheap,pod,spot,1,0.15,2026-11-01,https://example.com/p,\n"
    "RTX A5000,Cheap,pod,on-demand,1,0.40,2026-11-01,https://example.com/p,\n"
    "RTX A5000,Dear,vm,on-demand,4,0.60,2026-11-01,https://example.com/d,2.40 for four\n"
    "RTX A5000,Dear,vm,on-demand,4,0.90,2024-01-01,https://example.com/d-old,\n"
)


@pytest.fixture
def book(tmp_path, monkeypatch):
    """The histories above on their own: the shipped files are replaced by one unrelated row each."""
    shipped_buy, shipped_rent = tmp_path / "shipped-buy.csv", tmp_path / "shipped-rent.csv"
    shipped_buy.write_text(
        "gpu,kind,usd,date,source_url,note\nT4,street,700,2026-01-01,https://example.com/t,\n"
    )
    shipped_rent.write_text(
        CLOUD.splitlines()[0] + "\nT4,P,t4,on-demand,1,0.3,2026-01-01,https://example.com/t,\n"
    )
    monkeypatch.setattr(prices, "PURCHASE_PATH", shipped_buy)
    monkeypatch.setattr(prices, "CLOUD_PATH", shipped_rent)
    (tmp_path / "buy.csv").write_text(HISTORY)
    (tmp_path / "rent.csv").write_text(CLOUD)
    return prices.load_prices([tmp_path / "buy.csv", tmp_path / "rent.csv"], today=TODAY)


def test_the_newest_price_of_a_history_holds_and_as_of_prices_another_day(book):
    now = cost.cost_table(book, ["A5000"], ["fp32"])
    assert now["price_usd"].item() == 1700 and now["price_date"].item() == "2025-01-01"
    assert now["price_source_url"].item() == "https://example.com/c"
    then = cost.cost_table(book.as_of("2023-12-31"), ["A5000"], ["fp32"])
    assert then["price_usd"].item() == 2100 and then["price_date"].item() == "2023-06-01"
    first = cost.cost_table(book.as_of(date(2021, 6, 1)), ["A5000"], ["fp32"])
    assert first["price_kind"].item() == "msrp" and first["price_usd"].item() == 2250  # no street price yet
    before = cost.cost_table(book.as_of("2020-01-01"), ["A5000"], ["fp32"])
    assert before["price_usd"].isna().all() and "no purchase price" in before["note"].item()


def test_staleness_is_counted_from_the_day_asked_about(book):
    assert book.purchase.set_index("date").loc["2025-01-01", "stale"]  # 2025-01 is stale in Nov 2026
    then = book.as_of("2025-06-01")
    assert not then.purchase.set_index("date").loc["2025-01-01", "stale"]
    assert then.purchase["age_days"].min() == (date(2025, 6, 1) - date(2025, 1, 1)).days


def test_cloud_kinds_are_never_mixed_and_each_offering_takes_its_newest_price(book):
    by_kind = {
        k: cost.cost_table(book, ["A5000"], ["fp32"], cloud_kind=k, cloud="cheapest")
        for k in prices.CLOUD_KINDS
    }
    assert by_kind["on-demand"]["cloud_usd_per_hour"].item() == 0.40  # not the cheaper spot or serverless
    assert by_kind["spot"]["cloud_usd_per_hour"].item() == 0.15
    assert by_kind["serverless"]["cloud_usd_per_hour"].item() == 0.10
    median = cost.cost_table(book, ["A5000"], ["fp32"], cloud="median")
    assert median["cloud_usd_per_hour"].item() == pytest.approx((0.40 + 0.60) / 2)  # 0.90 was 2024's price
    with pytest.raises(ParameterError, match="cloud price kind 'reserved'"):
        cost.cost_table(book, ["A5000"], ["fp32"], cloud_kind="reserved")


def test_a_current_cloud_price_beats_a_cheaper_stale_one(tmp_path, monkeypatch, book):
    old = tmp_path / "old-offer.csv"
    old.write_text(
        CLOUD.splitlines()[0] + "\n"
        "RTX A5000,Gone,pod,on-demand,1,0.16,2025-07-13,https://example.com/gone,\n"
        "RTX A6000,Gone,pod,on-demand,1,0.30,2025-07-13,https://example.com/gone,\n"
        "RTX A6000,Gone,vm,on-demand,1,0.35,2025-07-13,https://example.com/gone-vm,\n"
    )
    both = prices.load_prices([tmp_path / "buy.csv", tmp_path / "rent.csv", old], today=TODAY)
    table = cost.cost_table(both, ["A5000", "A6000"], ["fp32"], cloud="cheapest").set_index("gpu")
    # the RTX A5000's 2025 offer is older than a year: the cheapest price that holds is Cheap's 0.40
    a5000 = table.loc["RTX A5000"]
    assert a5000["cloud_usd_per_hour"] == 0.40 and a5000["cloud_provider"] == "Cheap"
    assert a5000["cloud_date"] == "2026-11-01" and "stale" not in a5000["cloud_note"]
    # the RTX A6000 has nothing newer: its cheapest stale price serves, and says so
    a6000 = table.loc["RTX A6000"]
    assert a6000["cloud_usd_per_hour"] == 0.30
    assert a6000["cloud_note"] == "no on-demand offer newer than 2025-07-13"
    median = cost.cost_table(both, ["A5000"], ["fp32"], cloud="median")
    assert median["cloud_usd_per_hour"].item() == pytest.approx((0.40 + 0.60) / 2)  # the stale 0.16 left out
    assert cost.cost_table(both, ["A5000"], ["fp32"], cloud="gone")["cloud_usd_per_hour"].item() == 0.16
    assert cost.cost_table(both, ["A5000"], ["fp32"], cloud="dear")["cloud_usd_per_hour"].item() == 0.60
    # a price that held then is not stale then: as of mid-2025 the 0.16 offer was the cheapest
    then = cost.cost_table(both.as_of("2025-08-01"), ["A5000"], ["fp32"])
    assert then["cloud_usd_per_hour"].item() == 0.16


def test_any_takes_a_market_price_that_holds_before_a_stale_one(tmp_path, book):
    used = tmp_path / "used.csv"
    used.write_text(
        "gpu,kind,usd,date,source_url,note\n"
        "RTX A5000,used,1100,2026-06-01,https://example.com/u,\n"
        "RTX A6000,street,4000,2025-01-01,https://example.com/s,\n"
        "RTX A6000,msrp,4650,2020-10-05,https://example.com/m,\n"
    )
    both = prices.load_prices([tmp_path / "buy.csv", used], today=TODAY)
    table = cost.cost_table(both, ["A5000", "A6000"], ["fp32"]).set_index("gpu")
    # the A5000's street price of 2025-01-01 is stale, its used price of June 2026 holds
    assert table.loc["RTX A5000", ["price_kind", "price_usd"]].tolist() == ["used", 1100]
    assert "purchase price is stale" not in table.loc["RTX A5000", "note"]
    # the A6000 has no market price that holds: its stale street price, not a launch price of 2020
    assert table.loc["RTX A6000", ["price_kind", "price_usd"]].tolist() == ["street", 4000]
    assert "purchase price is stale (2025-01-01)" in table.loc["RTX A6000", "note"]
    assert cost.common_kind(both, ["RTX A5000", "RTX A6000"]) == "street"  # the only market kind both have
    assert cost.common_kind(both, ["RTX A5000"]) == "used"
    # a year earlier the street price still held
    then = cost.cost_table(both.as_of("2025-06-01"), ["A5000"], ["fp32"])
    assert (then["price_kind"].item(), then["price_usd"].item()) == ("street", 1700)


def test_a_cloud_file_without_kind_is_read_as_on_demand(tmp_path):
    old = tmp_path / "old-layout.csv"
    old.write_text(
        "gpu,provider,offering,gpus_per_offering,usd_per_hour,date,source_url,note\n"
        "A40,OurCloud,a40.large,4,0.9,2026-11-20,https://example.com/q,\n"
    )
    book = prices.load_prices(old, today=TODAY)
    assert book.cloud.loc[book.cloud["provider"] == "OurCloud", "kind"].tolist() == ["on-demand"]


def test_price_history_in_dollars_per_tflops(book, gpu):
    history = cost.price_history(book, "fp16", ["RTX A5000"])
    assert list(history["date"].dt.strftime("%Y-%m-%d")) == [
        "2021-04-12",
        "2022-03-01",
        "2023-06-01",
        "2025-01-01",
    ]
    assert list(history["kind"]) == ["msrp", "street", "street", "street"]
    assert history["usd_per_tflop"].tolist() == pytest.approx(
        [u / gpu("RTX A5000").fp16_tensor_tflops for u in (2250, 2400, 2100, 1700)]
    )
    assert cost.price_history(book, "bf16", ["V100"]).empty  # Volta has no BF16: nothing to price


def test_cost_command_as_of_and_cloud_kind(capsys, tmp_path, book):
    from gpukit import cli

    (tmp_path / "buy.csv").write_text(HISTORY)
    (tmp_path / "rent.csv").write_text(CLOUD)
    argv = [
        "cost",
        "--gpu",
        "A5000",
        "--precision",
        "fp32",
        "--prices",
        str(tmp_path / "buy.csv"),
        "--prices",
        str(tmp_path / "rent.csv"),
        "--format",
        "json",
    ]
    import json

    assert cli.main(argv + ["--as-of", "2026-11-15", "--cloud-kind", "spot"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["price_usd"], row["cloud_usd_per_hour"], row["cloud_kind"]) == (1700, 0.15, "spot")
    assert cli.main(argv + ["--as-of", "2023-12-31"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["price_usd"], row["cloud_usd_per_hour"]) == (2100, None)  # no cloud price held yet
    # the warning counts the stale prices the table priced with: the 2025 street price, not an offer of 2025
    # that a current one stands in for
    (tmp_path / "gone.csv").write_text(
        CLOUD.splitlines()[0] + "\nRTX A5000,Gone,pod,on-demand,1,0.16,2025-07-13,https://example.com/gone,\n"
    )
    assert cli.main(argv + ["--prices", str(tmp_path / "gone.csv"), "--as-of", "2026-11-29"]) == 0
    assert "gpukit: 1 price(s) in use are older than 365 days and marked stale" in capsys.readouterr().err
    assert cli.main(argv + ["--as-of", "31/12/2023"]) == 2
    err = capsys.readouterr().err
    assert "--as-of '31/12/2023' is not a date" in err and len(err.strip().splitlines()) == 1


def test_a_missing_price_says_why(tmp_path):
    book = prices.load_prices(today=TODAY)
    table = cost.cost_table(book, ["H100 NVL", "A100 PCIe 40GB"], ["fp16"]).set_index("gpu")
    assert table.loc["H100 NVL", "note"].startswith(
        "no purchase price: NVIDIA sells the H100 NVL to system builders"
    )
    assert "(searched 2026-11-30)" in table.loc["H100 NVL", "note"]
    assert (
        "no on-demand cloud price: providers list an 'A100 40GB' without its form factor"
        in table.loc["A100 PCIe 40GB", "note"]
    )
    bad = tmp_path / "gaps.csv"
    bad.write_text("gpu,what,reason,checked\nH100 NVX,purchase,none found,2026-11-01\n")
    with pytest.raises(DataError, match=r"gaps.csv, line 2 \(H100 NVX\), column gpu"):
        prices.load_gaps(path=bad)


def test_any_takes_the_cheaper_of_the_street_and_used_prices_that_hold(tmp_path):
    mine = tmp_path / "mine.csv"
    mine.write_text(
        "gpu,kind,usd,date,source_url,note\n"
        "RTX A5000,street,2100,2026-11-01,https://example.com/new,\n"
        "RTX A5000,used,1300,2026-11-10,https://example.com/used,\n"
        "RTX A6000,street,4200,2026-11-01,https://example.com/new6,\n"
        "RTX A6000,used,4600,2026-11-10,https://example.com/used6,\n"
    )
    book = prices.load_prices([mine], today=TODAY)
    table = cost.cost_table(book, ["RTX A5000", "RTX A6000"], ["fp16"], "any").set_index("gpu")
    assert table.loc["RTX A5000", "price_usd"] == 1300 and table.loc["RTX A5000", "price_kind"] == "used"
    # a used price above the same card's new one is flagged and left out: the new one is cheaper anyway
    assert table.loc["RTX A6000", "price_usd"] == 4200 and table.loc["RTX A6000", "price_kind"] == "street"
