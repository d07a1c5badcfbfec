"""The sanity checks prices pass as they load: a failing row is kept with its reason, never used,
and every answer that would have used it says how many it left out."""

from __future__ import annotations

from datetime import date

import pytest

from gpukit import cli
from gpukit.prices import book as prices
from gpukit.prices import checks as price_checks
from gpukit.prices import cost

TODAY = date(2026, 12, 5)


def _file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_chart_input_is_not_a_street_price_and_is_left_out_with_its_reason():
    book = prices.load_prices(today=TODAY)
    v100 = book.purchase[(book.purchase["gpu"] == "V100 SXM2 16GB") & (book.purchase["kind"] == "street")]
    chart = v100[v100["usd"] == 9937.5].iloc[0]
    assert chart["flag"] == (
        "a benchmark script's price per GPU for a performance-per-dollar chart, not a street price"
    )
    assert chart["line"] > 1 and chart["origin"].endswith("prices.csv")
    assert cost._purchase(book, "V100 SXM2 16GB", "street") is None
    assert cost.purchase_left_out(book, "V100 SXM2 16GB", "street").startswith(
        "flagged street price left out ($9,938, 2023-01-12: a benchmark script's price per GPU"
    )
    # every shipped flag is one of the four reasons, and no shipped cloud rate fails
    reasons = book.purchase.loc[book.purchase["flag"] != "", "flag"]
    assert reasons.str.match(
        r"a benchmark script's|used above new|used above a newer, faster card's|\d+x its variant siblings'"
    ).all()
    assert (book.cloud["flag"] == "").all()


def test_siblings_used_above_new_and_renting_dearer_than_buying(tmp_path):
    mine = _file(
        tmp_path,
        "quotes.csv",
        "gpu,kind,usd,date,source_url,note\n"
        "V100 PCIe 16GB,used,500,2024-03-01,https://example.com/a,\n"
        "V100 SXM2 16GB,used,600,2024-03-01,https://example.com/b,\n"
        "V100 SXM2 32GB,used,5000,2024-03-01,https://example.com/c,\n"
        "RTX A4000,street,900,2026-11-01,https://example.com/d,\n"
        "RTX A4000,used,1000,2026-11-15,https://example.com/e,\n",
    )
    rates = _file(
        tmp_path,
        "rates.csv",
        "gpu,provider,offering,kind,gpus_per_offering,usd_per_hour,date,source_url,note\n"
        "RTX A4000,Dear,1x A4000,on-demand,1,3.5,2026-11-20,https://example.com/f,\n"
        "RTX A4000,Fair,1x A4000,on-demand,1,0.2,2026-11-20,https://example.com/g,\n",
    )
    book = prices.load_prices([mine, rates], today=TODAY)
    flag = {(r.gpu, r.kind, r.usd): r.flag for r in book.purchase.itertuples() if r.origin == str(mine)}
    assert (
        flag[("V100 SXM2 32GB", "used", 5000)] == "9x its variant siblings' used prices of 2024 (median $550)"
    )
    assert flag[("V100 PCIe 16GB", "used", 500)] == "" and flag[("RTX A4000", "street", 900)] == ""
    assert (
        flag[("RTX A4000", "used", 1000)] == "used above new: $1,000 used against $900 street on 2026-11-01"
    )
    dear = book.cloud[book.cloud["provider"] == "Dear"].iloc[0]
    assert dear["flag"] == (
        f"{price_checks.RENT_HOURS} hours at $3.50/hour cost more than buying the card ($900 street on 2026-11-01)"
    )
    # cheapest and median leave the flagged rate out, and say so
    for choice in ("cheapest", "median"):
        picked = cost._cloud(book, "RTX A4000", choice)
        assert picked["left_out"] == "1 flagged price left out (gpukit prices check)"
    table = cost.cost_table(book, ["RTX A4000"], ["fp16"], cloud="median")
    assert "1 flagged price left out (gpukit prices check)" in table["note"].iloc[0]


def test_gpukit_prices_check_names_file_line_and_reason(tmp_path, capsys):
    mine = _file(
        tmp_path,
        "quotes.csv",
        "gpu,kind,usd,date,source_url,note\nRTX A4000,street,900,2026-11-01,https://example.com/d,\n"
        "RTX A4000,used,1000,2026-11-15,https://example.com/e,\n",
    )
    assert cli.main(["prices", "check", "--prices", str(mine)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("prices flagged; each is kept and left out of every answer, which says so:")
    assert (
        f"{mine}, line 3 (RTX A4000, purchase): used above new: $1,000 used against $900 street on 2026-11-01"
        in out
    )
    assert any(
        line.startswith("data/prices.csv, line ") and "performance-per-dollar chart" in line for line in out
    )


@pytest.mark.parametrize("multiple", [price_checks.SIBLING_MULTIPLE])
def test_the_thresholds_are_what_the_docs_say(multiple):
    assert multiple == 3.0 and price_checks.RENT_HOURS == 300


def test_a_cloud_answer_is_the_market_median_with_its_offers_range_and_newest_date(tmp_path, capsys):
    rates = _file(
        tmp_path,
        "rates.csv",
        "gpu,provider,offering,kind,gpus_per_offering,usd_per_hour,date,source_url,note\n"
        "RTX A4000,One,a,on-demand,1,0.16,2026-10-01,https://example.com/1,\n"
        "RTX A4000,Two,b,on-demand,1,0.30,2026-11-01,https://example.com/2,\n"
        "RTX A4000,Three,c,on-demand,1,0.44,2026-11-20,https://example.com/3,\n",
    )
    book = prices.load_prices([rates], today=TODAY)
    shipped = book.current().cloud
    pool = shipped[(shipped["gpu"] == "RTX A4000") & (shipped["kind"] == "on-demand") & ~shipped["stale"]]
    assert cost.DEFAULT_CLOUD == "median"
    picked = cost._cloud(book, "RTX A4000", cost.DEFAULT_CLOUD)
    assert picked["usd_per_hour"] == pytest.approx(pool["usd_per_hour"].median())
    assert picked["provider"] == (
        f"median of {len(pool)} offers from {pool['provider'].nunique()} providers "
        f"(${pool['usd_per_hour'].min():.2f}-${pool['usd_per_hour'].max():.2f})"
    )
    assert picked["date"] == pool["date"].max()
    assert cost._cloud(book, "RTX A4000", "cheapest")["usd_per_hour"] == pytest.approx(
        pool["usd_per_hour"].min()
    )
    assert cli.main(["cost", "--gpu", "RTX A4000", "--price-kind", "cloud", "--prices", str(rates)]) == 0
    assert f"median of {len(pool)} offers" in capsys.readouterr().out


def test_the_price_history_leaves_flagged_prices_out_and_its_figure_says_how_many():
    from gpukit import plots

    book = prices.load_prices(today=TODAY)
    history = cost.price_history(book)
    flagged = book.purchase[
        (book.purchase["flag"] != "") & book.purchase["kind"].isin(["street", "used", "msrp"])
    ]
    assert history.attrs["flagged_left_out"] == len(flagged) > 0
    assert not ((history["gpu"] == "V100 SXM2 16GB") & (history["usd"] == 9937.5)).any()
    title = plots.price_history_figure(history).axes[0].get_title()
    assert title.endswith(f"{len(flagged)} flagged prices left out (gpukit prices check)")


def test_a_used_price_above_a_newer_better_cards_new_price_is_flagged(tmp_path):
    """The A100 PCIe 80GB's used asking price above what an H100 PCIe (newer, faster, as much memory
    and more bandwidth) sold for new in the year before it; a used 3090 above a new 5070 Ti is not
    flagged: the 5070 Ti has less memory."""
    mine = _file(
        tmp_path,
        "quotes.csv",
        "gpu,kind,usd,date,source_url,note\n"
        "H100 PCIe,street,24000,2026-02-01,https://example.com/h100,\n"
        "A100 PCIe 80GB,used,26000,2026-06-01,https://example.com/a100,\n"
        "A100 PCIe 80GB,used,23000,2027-06-01,https://example.com/a100-later,\n"
        "GeForce RTX 5070 Ti,street,750,2026-02-01,https://example.com/5070ti,\n"
        "GeForce RTX 3090,used,800,2026-06-01,https://example.com/3090,\n",
    )
    book = prices.load_prices([mine], today=date(2027, 7, 1))
    flag = {(r.gpu, r.usd): r.flag for r in book.purchase.itertuples() if r.origin == str(mine)}
    assert flag[("A100 PCIe 80GB", 26000)] == (
        "used above a newer, faster card's new price: $26,000 used against the H100 PCIe's $24,000 street "
        "on 2026-02-01"
    )
    assert (
        flag[("A100 PCIe 80GB", 23000)] == ""
    )  # the H100's price is over a year older: not what it sells for
    assert flag[("GeForce RTX 3090", 800)] == ""
    assert price_checks.RIVAL_DAYS == 365
