"""gpukit rank: every GPU for one job, ranked by work per dollar, with the fit and error beside it."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from gpukit import llm, memory, perfmodel, prices, rank, specs
from gpukit.cli import main
from gpukit.errors import ParameterError
from gpukit.prices import cost
from gpukit.units import figure

#: Four cards that fit BERT-base at 128 tokens, one that has no street price in the test's file
#: (the V100 PCIe), and one whose price is far above the others (the H100 SXM5).
GPUS = ("RTX A4000", "RTX A5000", "GeForce RTX 4090", "A40", "V100 PCIe 16GB", "H100 SXM5")
PRICES = {"RTX A4000": 1000, "RTX A5000": 2000, "GeForce RTX 4090": 1800, "A40": 4500, "H100 SXM5": 25000}
RATES = {"RTX A4000": 0.2, "RTX A5000": 0.3, "GeForce RTX 4090": 0.4, "A40": 0.45, "V100 PCIe 16GB": 0.25}
JOB = rank.Job("bert-base", "fp16", seq_len=128)


@pytest.fixture(scope="module")
def cat():
    return specs.select(specs.load_catalogue(), GPUS)


@pytest.fixture(scope="module")
def price_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("prices")
    buy = folder / "buy.csv"
    buy.write_text(
        "gpu,kind,usd,date,source_url,note\n"
        + "".join(
            f"{g},street,{usd},2026-11-01,https://example.com/{i},\n"
            for i, (g, usd) in enumerate(PRICES.items())
        )
    )
    rent = folder / "rent.csv"
    rent.write_text(
        "gpu,provider,offering,kind,gpus_per_offering,usd_per_hour,date,source_url,note\n"
        + "".join(
            f"{g},Test,pod,on-demand,1,{r},2026-11-01,https://example.com/r{i},\n"
            for i, (g, r) in enumerate(RATES.items())
        )
    )
    return [str(buy), str(rent)]


@pytest.fixture(scope="module")
def buying(cat, price_files):
    return rank.rank(JOB, rank.Price("street"), price_files, cat)


@pytest.mark.slow  # a second or more: the full tier's
def test_throughput_is_what_predict_says_at_the_batch_used(buying, cat):
    for _, row in buying.iterrows():
        predicted = perfmodel.predict_table(
            "bert-base", "fp16", int(row["batch_size"]), "train", [row["gpu"]], catalogue=cat, seq_len=128
        )
        assert row["throughput"] == pytest.approx(predicted["throughput"].iloc[0], rel=1e-12), row["gpu"]


def test_largest_batch_is_what_fit_says_and_the_batch_used_fits(buying):
    estimator = memory.Estimator("bert-base", None, 128)
    for _, row in buying.iterrows():
        capacity = specs.memory_bytes(specs.lookup(row["gpu"])["memory_gb"])
        expected = estimator.largest_batch(
            capacity, "fp16", "adam", "train", memory.DEFAULT_RUNTIME_RESERVE_BYTES
        )
        assert row["largest_batch"] == expected > 0
        assert 1 <= row["batch_size"] <= row["largest_batch"] and row["fits"]


def test_the_default_batch_is_the_largest_that_fits_capped_at_the_plateau(buying, cat):
    """The batch used gets within PLATEAU of the throughput at the largest batch that fits, and
    the power of two below it falls short of that."""

    def at(gpu: str, batch: int) -> float:
        table = perfmodel.predict_table(
            "bert-base", "fp16", batch, "train", [gpu], catalogue=cat, seq_len=128
        )
        return table["throughput"].iloc[0]

    capped = 0
    for _, row in buying.iterrows():
        gpu, used, largest = row["gpu"], int(row["batch_size"]), int(row["largest_batch"])
        top = at(gpu, largest)
        assert row["throughput"] >= (1 - rank.PLATEAU) * top, gpu
        if used > 1:
            below = 2 ** ((used - 1).bit_length() - 1)
            assert at(gpu, below) < (1 - rank.PLATEAU) * top, gpu
        capped += used < largest
    assert capped, "the test's GPUs were meant to include one capped below its largest batch"


def test_ranked_by_throughput_per_dollar_with_the_unpriced_after(buying):
    ranked = buying[buying["standing"] == "ranked"]
    assert list(ranked["rank"]) == list(range(1, len(ranked) + 1))
    per = ranked["throughput"] / ranked["gpu"].map(PRICES) * 1000
    assert ranked["throughput_per_1k_usd"].tolist() == pytest.approx(per.tolist())
    assert per.is_monotonic_decreasing
    assert set(ranked["gpu"]) == set(PRICES)
    (unpriced,) = buying[buying["standing"] == "no price"].itertuples()
    assert unpriced.gpu == "V100 PCIe 16GB" and pd.isna(unpriced.rank) and "no street price" in unpriced.note
    assert buying.index[buying["gpu"] == "V100 PCIe 16GB"][0] == len(ranked)  # listed right after
    assert (ranked["price_kind"] == "street").all() and (ranked["price_date"] == "2026-11-01").all()
    assert ranked["price_source_url"].str.startswith("https://example.com/").all()


def test_owning_cost_per_million_items_spreads_the_tco_over_the_hours_worked(buying):
    row = buying.iloc[0]
    tco = cost.tco_usd(row["price_usd"], specs.lookup(row["gpu"])["tdp_w"], 3.0, 0.5, 0.15)
    per_hour = tco / (cost.HOURS_PER_YEAR * 3.0 * 0.5)
    assert row["usd_per_million_items"] == pytest.approx(per_hour / (row["throughput"] * 3600) * 1e6)


def test_five_years_at_full_use_count_five_years_of_energy_over_five_years_of_hours(cat, price_files):
    """``years`` and ``utilization`` reach the cost of ownership as well as the hours it is spread
    over: with them dropped on the way, five years would spread three years' energy."""
    five = rank.rank(JOB, rank.Price("street"), price_files, cat, years=5.0, utilization=1.0)
    row = five[five["standing"] == "ranked"].iloc[0]
    tdp = specs.lookup(row["gpu"])["tdp_w"]
    tco = cost.tco_usd(row["price_usd"], tdp, 5.0, 1.0, 0.15)
    assert tco > cost.tco_usd(row["price_usd"], tdp, 3.0, 0.5, 0.15)
    per_hour = tco / (cost.HOURS_PER_YEAR * 5.0 * 1.0)
    assert row["usd_per_million_items"] == pytest.approx(per_hour / (row["throughput"] * 3600) * 1e6)


def test_price_of_is_the_cost_tables_price(cat, price_files):
    book = prices.load_prices(price_files)
    table = cost.cost_table(book, list(cat["gpu"]), ["fp16"], "street", catalogue=cat).set_index("gpu")
    for _, g in cat.iterrows():
        one = cost.price_of(book, g, "street")
        for column in ("price_usd", "tco_usd", "cloud_usd_per_hour", "purchase_note", "cloud_note"):
            assert one[column] == table.loc[g["gpu"], column] or (
                one[column] is None and pd.isna(table.loc[g["gpu"], column])
            )


def test_the_error_beside_each_row_is_the_familys_or_its_architectures(buying, cat):
    family = perfmodel.family_accuracy("transformer")["median_abs_error_pct"]
    held = perfmodel.held_out_errors("transformer")
    graded = buying[buying["graded"]]
    # a graded GPU quotes the family's median error, or its own held-out error where larger
    assert len(graded) and graded["error_pct"].tolist() == pytest.approx(
        [max(family, held[g]) for g in graded["gpu"]]
    )
    errors = graded["error_pct"].tolist()
    assert max(errors) > family and min(errors) == pytest.approx(family)
    # an ungraded GPU quotes its architecture's held-out error, never less than the family's
    bands = perfmodel.error_bands("bert-base", list(buying["gpu"]), cat)
    ungraded = buying[~buying["graded"]]
    assert len(ungraded)
    assert ungraded["error_pct"].tolist() == pytest.approx([bands[g].error_pct for g in ungraded["gpu"]])
    assert (ungraded["error_pct"] >= family).all()
    assert "median error" in buying.attrs["accuracy"]


def test_neighbours_within_each_others_error_are_marked(buying):
    ranked = buying[buying["standing"] == "ranked"].reset_index(drop=True)
    per = ranked["throughput_per_1k_usd"].astype(float)
    for i in range(1, len(ranked)):
        ratio = per[i - 1] / per[i]
        bands = (1 + ranked.at[i - 1, "error_pct"] / 100) * (1 + ranked.at[i, "error_pct"] / 100)
        marked = ranked.at[i, "within_error_of"]
        assert marked == (ranked.at[i - 1, "gpu"] if ratio <= bands else ""), ranked.at[i, "gpu"]
    assert ranked.at[0, "within_error_of"] == ""
    assert (buying.loc[buying["standing"] != "ranked", "within_error_of"] == "").all()


def test_the_headline_says_when_the_best_two_are_within_error(buying):
    close = buying.copy()
    close.attrs = buying.attrs
    close.loc[1, "within_error_of"] = close.loc[0, "gpu"]
    assert f"{close.loc[1, 'gpu']} is within error of it" in rank.headline(close)
    apart = buying.copy()
    apart.attrs = buying.attrs
    apart.loc[1, "within_error_of"] = ""
    assert "within error" not in rank.headline(apart)


def test_a_budget_leaves_out_what_costs_more_and_says_so(cat, price_files):
    within = rank.rank(JOB, rank.Price("street", budget_usd=2000), price_files, cat)
    assert set(within.loc[within["standing"] == "ranked", "gpu"]) == {
        "RTX A4000",
        "RTX A5000",
        "GeForce RTX 4090",
    }
    assert "V100 PCIe 16GB" in set(within["gpu"])  # no price: it cannot be said to cost more
    assert within.attrs["budget_note"] == "2 GPU(s) cost more than $2,000 and are left out"


def test_a_budget_below_every_price_says_so_and_shows_the_cheapest(cat, price_files):
    low = rank.rank(JOB, rank.Price("street", budget_usd=500), price_files, cat)
    assert low["gpu"].tolist() == ["RTX A4000"] and low["standing"].tolist() == ["over budget"]
    assert rank.headline(low) == (
        "Nothing to rank: the budget $500 is below every street purchase price of a GPU that runs this; "
        "the cheapest is RTX A4000 at $1,000."
    )


def test_renting_ranks_by_dollars_per_million_items(cat, price_files):
    renting = rank.rank(JOB, rank.Price("cloud", cloud="Test"), price_files, cat)  # the test's offers only
    ranked = renting[renting["standing"] == "ranked"]
    cost = ranked["gpu"].map(RATES) / (ranked["throughput"] * 3600) * 1e6
    assert ranked["usd_per_million_items"].tolist() == pytest.approx(cost.tolist())
    assert cost.is_monotonic_increasing and set(ranked["gpu"]) == set(RATES)
    assert (ranked["cloud_provider"] == "Test").all() and ranked["price_usd"].isna().all()
    assert renting.iloc[-1]["gpu"] == "H100 SXM5" and renting.iloc[-1]["standing"] == "no price"


def test_several_gpus_are_priced_together(cat, price_files):
    two = rank.rank(
        rank.Job("bert-base", "fp16", seq_len=128, gpus=2), rank.Price("street"), price_files, cat
    )
    row = two[two["gpu"] == "RTX A4000"].iloc[0]
    assert row["gpus"] == 2
    assert row["throughput_per_1k_usd"] == pytest.approx(row["throughput"] / (2 * PRICES["RTX A4000"]) * 1000)


def test_a_model_that_fits_nowhere_is_listed_as_not_fitting(cat, price_files):
    big = rank.rank(rank.Job("llama-7b", "fp16", seq_len=2048), rank.Price("street"), price_files, cat)
    small = big[big["gpu"].isin(["RTX A4000", "RTX A5000", "GeForce RTX 4090"])]
    assert (small["standing"] == "does not fit").all() and not small["fits"].any()
    assert small["note"].str.contains("does not fit").all()


def test_headline_and_basis_say_the_answer_and_what_it_assumed(buying):
    best = buying.iloc[0]
    line = rank.headline(buying)
    assert line.startswith(f"Best per dollar: {best['gpu']}, ") and "(street, 2026-11-01)" in line
    assert f"batch {best['batch_size']}" in line and "tokens/s per $1,000" in line
    said = rank.basis(buying)
    assert said.startswith("bert-base training (fp16, adam), 128 tokens; each GPU at the largest batch")
    assert "ranked by street purchase price" in said and "Predicted: within ±15%" in said


@pytest.mark.slow  # a second or more: the full tier's
def test_llm_ranking_by_tokens_per_dollar(cat, price_files):
    served = rank.rank_llm(rank.LLMJob("llama-3-8b"), rank.Price("cloud", cloud="Test"), price_files, cat)
    ranked = served[served["standing"] == "ranked"]
    table = llm.llm_table("llama-3-8b", "q4_k_m", 4096, 1, list(ranked["gpu"]), catalogue=cat).set_index(
        "gpu"
    )
    assert ranked["throughput"].tolist() == pytest.approx(
        table.loc[ranked["gpu"], "decode_tokens_per_s"].tolist()
    )
    assert ranked["usd_per_million_items"].is_monotonic_increasing
    assert served.attrs["unit"] == "tokens/s" and "decode" in served.attrs["accuracy"]


@pytest.mark.parametrize(
    "job, message",
    [
        (rank.Job("bert-base", "fp99"), "fp99"),
        (rank.Job("bert-base", mode="sleep"), "use train or infer"),
        (rank.Job("bert-base", gpus=0), "--gpus 0 must be at least 1"),
        (rank.Job("bert-base", mode="infer", gpus=2), "data-parallel training"),
    ],
)
def test_bad_jobs_are_one_line_errors(job, message, cat):
    with pytest.raises(ParameterError, match=message):
        rank.rank(job, catalogue=cat)


def test_a_bad_price_choice_is_refused():
    with pytest.raises(ParameterError, match="price kind 'new'"):
        rank.Price("new")
    with pytest.raises(ParameterError, match="budget"):
        rank.Price("street", budget_usd=-5)


@pytest.mark.slow  # a second or more: the full tier's
def test_cli_answers_first_then_the_table(capsys, price_files):
    argv = ["rank", "--workload", "bert-base", "--seq-len", "128", "--budget", "2000"]
    assert main([*argv, *sum((["--prices", f] for f in price_files), [])]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Best per dollar: ") and out[1].startswith("bert-base training (fp16, adam)")
    assert "cost more than $2,000" in out[1]


@pytest.mark.slow  # a second or more: the full tier's
def test_cli_table_shows_which_gpu_each_is_within_error_of(capsys, buying, tmp_path):
    # price the A5000 so that its work per dollar lies 3% below the A4000's: within any band
    per = buying.set_index("gpu")
    a5000 = per.at["RTX A5000", "throughput"] / (per.at["RTX A4000", "throughput_per_1k_usd"] * 0.97) * 1000
    quotes = tmp_path / "quotes.csv"
    quotes.write_text(
        "gpu,kind,usd,date,source_url,note\n"
        f"RTX A4000,street,{PRICES['RTX A4000']},2026-11-01,https://example.com/a,\n"
        f"RTX A5000,street,{a5000:.2f},2026-11-01,https://example.com/b,\n"
    )
    ranking = rank.rank(JOB, rank.Price("street"), [str(quotes)])
    marked = ranking[ranking["within_error_of"] != ""]
    assert len(marked)
    assert main(["rank", "--workload", "bert-base", "--seq-len", "128", "--prices", str(quotes)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any("within error of" in line for line in lines[:6])  # the column's header
    for _, row in marked.iterrows():
        (line,) = [x for x in lines if x.split() and x.split()[0] == str(row["rank"])]
        assert row["within_error_of"] in [cell.strip() for cell in line.split("  ")]


@pytest.mark.slow  # a second or more: the full tier's
def test_cli_json_carries_every_column_and_the_plot_is_written(capsys, price_files, tmp_path):
    figure = tmp_path / "rank.png"
    argv = ["rank", "--llm", "llama-3-8b", "--price-kind", "cloud", "--format", "json", "--plot", str(figure)]
    assert main([*argv, *sum((["--prices", f] for f in price_files), [])]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert set(rank.COLUMNS) <= set(rows[0]) and rows[0]["rank"] == 1
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["rank", "--workload", "bert-base", "--context", "2048"], "--context applies only with --llm"),
        (["rank", "--llm", "llama-3-8b", "--seq-len", "128"], "--seq-len applies only with --workload"),
        (["rank", "--workload", "bert-base", "--plot", "/tmp/x.nope"], "--plot /tmp/x.nope"),
    ],
)
@pytest.mark.slow  # a second or more: the full tier's
def test_cli_options_that_do_not_apply_are_errors(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_ranking_cut_to_a_budget_is_the_ranking_with_that_budget(buying, cat, price_files):
    for budget in (2000, 500, None):
        cut = rank.with_budget(buying, budget)
        direct = rank.rank(JOB, rank.Price("street", budget_usd=budget), price_files, cat)
        pd.testing.assert_frame_equal(cut, direct)
        assert cut.attrs["budget_note"] == direct.attrs["budget_note"]
        assert rank.headline(cut) == rank.headline(direct)


def test_a_budget_headline_also_names_the_fastest_within_it(cat, price_files):
    within = rank.rank(JOB, rank.Price("street", budget_usd=2000), price_files, cat)
    ranked = within[within["standing"] == "ranked"]
    fastest = ranked.loc[ranked["throughput"].idxmax()]
    assert f" Fastest within $2,000: {fastest['gpu']}, " in rank.headline(within)


def test_the_summary_a_page_shows_and_where_the_report_finds_it(buying, tmp_path, monkeypatch):
    s = rank.summary(buying, top=2)
    assert s["headline"] == rank.headline(buying) and s["basis"] == rank.basis(buying)
    assert [r["gpu"] for r in s["rows"]] == buying["gpu"].head(2).tolist()
    assert s["columns"] == list(rank.SUMMARY_COLUMNS[False]) and s["price"] == "street purchase price"
    assert rank.save_for_report([buying]) is None  # outside a report run
    monkeypatch.setenv(rank.RUN_DIR_ENV, str(tmp_path))
    path = rank.save_for_report([buying], top=2)
    doc = json.loads(open(path).read())
    assert doc["kind"] == "rank" and doc["rankings"][0]["rows"] == s["rows"]
    assert doc["choices"] == rank.choices([buying])


def test_a_page_shows_the_bottom_line_then_the_table(buying):
    shown = rank.answer(buying, top=3)
    page = shown._repr_html_()
    assert page.startswith(f"<p><b>{rank.headline(buying)}</b></p>")
    assert "throughput (tokens/s)" in page and "tokens/s per $1,000" in page
    assert page.count("<tr") == 4  # the header and the best three
    both = rank.answers([buying, buying], top=1)._repr_html_()
    assert both.count("Best per dollar") == 2


def test_the_explorer_ranks_as_its_controls_say(monkeypatch, cat, price_files):
    from gpukit import plots
    from gpukit.lab import explore

    asked, real = [], rank.rank

    def fake_rank(job, price, *args, **kwargs):
        asked.append((job.workload, price.kind, price.budget_usd))
        return real(job, price, price_files, cat)

    monkeypatch.setattr(rank, "rank", fake_rank)
    monkeypatch.setattr(plots, "rank_figure", lambda ranked: "figure")
    box = explore.ranking("bert-base", 0.0)
    job, budget, kind = box.children[0].children
    budget.value = 2000
    kind.value = "rent"
    assert asked == [
        ("bert-base", "street", None),
        ("bert-base", "street", 2000),
        ("bert-base", "cloud", 2000),
    ]


def test_a_choice_names_the_best_per_dollar_the_next_and_the_fastest(buying, cat, price_files):
    ranked = buying[buying["standing"] == "ranked"]
    row = rank.choice(buying, runners_up=2)
    assert tuple(row) == rank.CHOICE_COLUMNS and row["asked"] == "buying, any price"
    best = ranked.iloc[0]
    assert row["best"] == best["gpu"] and row["next_best"] == ", ".join(ranked["gpu"].iloc[1:3])
    assert row["per_dollar"] == f"{figure(best['throughput_per_1k_usd'])} tokens/s per $1,000"
    assert row["price"] == f"${figure(PRICES[best['gpu']])} (street, 2026-11-01)"
    assert row["error"] == f"median {best['error_pct']:.1f}%"
    fastest = ranked.loc[ranked["throughput"].idxmax()]
    assert fastest["gpu"] == "H100 SXM5" and row["fastest"].startswith("H100 SXM5, ")
    within = rank.choice(rank.with_budget(buying, 2000))
    assert within["asked"] == "buying, up to $2,000"
    assert within["fastest"].split(",")[0] in {"RTX A4000", "RTX A5000", "GeForce RTX 4090"}
    renting = rank.choice(rank.rank(JOB, rank.Price("cloud", cloud="Test"), price_files, cat))
    assert renting["asked"] == "renting, on-demand" and renting["per_dollar"].endswith(" per million tokens")
    assert renting["price"].endswith("/hour (Test, 2026-11-01)")


def test_a_choice_with_nothing_to_rank_says_why(buying):
    row = rank.choice(rank.with_budget(buying, 500))
    assert row["best"] == row["fastest"] == "" and row["per_dollar"].startswith("the budget $500 is below")


@pytest.mark.slow  # a second or more: the full tier's
def test_choices_are_one_table_per_job_a_row_per_question(buying, cat, price_files):
    llm_buying = rank.rank_llm(rank.LLMJob("llama-3-8b"), rank.Price("street"), price_files, cat)
    tables = rank.choices([buying, rank.with_budget(buying, 2000), llm_buying])
    assert [t["job"] for t in tables] == [JOB.describe(), rank.LLMJob("llama-3-8b").describe()]
    assert [r["asked"] for r in tables[0]["rows"]] == [
        "buying, any price",
        "buying, up to $2,000",
    ]
    assert tables[0]["input"] == "128 tokens" and tables[0]["accuracy"] == buying.attrs["accuracy"]
    assert len(tables[1]["rows"]) == 1 and tables[1]["columns"] == list(rank.CHOICE_COLUMNS)


def test_a_page_shows_the_choices_under_readable_headers_and_figures_the_whole_rankings(
    buying, cat, price_files
):
    renting = rank.rank(JOB, rank.Price("cloud", cloud="Test"), price_files, cat)
    rankings = [buying, rank.with_budget(buying, 2000), renting]
    assert rank.whole(rankings) == [buying]  # no budget, buying: every GPU on its figure
    (shown,) = rank.choices_table(rankings)
    assert shown.headline == f"{JOB.describe()}, 128 tokens" and shown.basis.startswith("Predicted: within")
    page = shown._repr_html_()
    assert all(f">{h}</th>" in page for h in rank.CHOICE_HEADERS) and page.count("<tr") == 4


@pytest.mark.slow  # a second or more: the full tier's
def test_the_front_page_rankings_are_kept_between_runs_with_the_shipped_prices(monkeypatch, price_files):
    from gpukit.rank import pages

    jobs = (rank.Job("bert-base", "fp16", seq_len=128),)
    first = rank.for_your_money(jobs, budgets=(None, 2000))
    assert [r.attrs["price"].budget_usd for r in first] == [None, 2000, None]
    monkeypatch.setattr(pages, "rank", lambda *a, **k: pytest.fail("ranked again"))
    again = rank.for_your_money(jobs, budgets=(None, 2000))
    for a, b in zip(first, again):
        pd.testing.assert_frame_equal(a, b)
        assert a.attrs["price"] == b.attrs["price"] and a.attrs["job"] == b.attrs["job"]
    with pytest.raises(pytest.fail.Exception, match="ranked again"):  # the user's prices: ranked afresh
        rank.for_your_money(jobs, budgets=(None,), price_files=price_files)


@pytest.mark.slow  # a second or more: the full tier's
def test_any_ranks_each_card_at_its_cheaper_price_and_names_the_kind(capsys, cat, price_files, tmp_path):
    """``--price-kind any``: a card with a used price below its street price ranks at the used one,
    and the table says which kind each row took; ``used`` ranks only the cards with a used price."""
    used_file = tmp_path / "used.csv"
    used_file.write_text(
        "gpu,kind,usd,date,source_url,note\n"
        "RTX A5000,used,1200,2026-11-05,https://example.com/u1,\n"
        "A40,used,4800,2026-11-05,https://example.com/u2,\n"  # above its street price: flagged, not taken
    )
    quotes = [*price_files, str(used_file)]
    anyway = rank.rank(JOB, rank.Price("any"), quotes, cat).set_index("gpu")
    assert anyway.at["RTX A5000", "price_usd"] == 1200 and anyway.at["RTX A5000", "price_kind"] == "used"
    assert anyway.at["A40", "price_usd"] == PRICES["A40"] and anyway.at["A40", "price_kind"] == "street"
    used = rank.rank(JOB, rank.Price("used"), quotes, cat).set_index("gpu")
    assert used.at["RTX A5000", "price_usd"] == 1200
    book = prices.load_prices(quotes)
    for gpu, row in used.iterrows():  # ranked where a used price holds, listed after "no price" where none
        has_used = cost._purchase(book, gpu, "used") is not None
        assert (row["standing"] == "no price") == (not has_used and row["fits"]), gpu
    argv = [
        "rank",
        "--workload",
        "bert-base",
        "--seq-len",
        "128",
        "--price-kind",
        "any",
        *sum((["--prices", f] for f in quotes), []),
    ]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("----"))
    assert "kind" in lines[header - 1] or "kind" in lines[header - 2]
    a5000 = next(line for line in lines if " RTX A5000 " in f" {line} ")
    assert " used " in a5000 and "1,200" in a5000
