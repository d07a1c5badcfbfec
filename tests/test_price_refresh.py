"""`gpukit prices refresh`: gpuhunt's offers as dated cloud price rows, written to a user-level file
merged over the shipped prices, and one line offline. The offers are a small list in gpuhunt's own
catalogue format (tests/fakes/gpuhunt/, one file per provider, read with gpuhunt's reader; the rows
are shaped after public listings, the prices are test values); nothing here touches the network."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import gpuhunt
import pytest
from gpuhunt._internal import storage

from gpukit import cli, resources, specs
from gpukit.prices import book as prices
from gpukit.prices import refresh as price_refresh

FAKES = Path(__file__).parent / "fakes" / "gpuhunt"
TODAY = date(2026, 12, 5)


def recorded_offers() -> list:
    items = []
    for path in sorted(FAKES.glob("*.csv")):
        with open(path) as f:
            items += list(storage.load(f, provider=path.stem))
    return items


@pytest.fixture
def prices_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(resources.PRICES_DIR_ENV, str(tmp_path))
    return tmp_path


def test_every_gpuhunt_name_used_is_one_gpuhunt_knows_and_one_catalogue_gpu():
    known = {(g.name, int(g.memory)) for g in (*gpuhunt.KNOWN_NVIDIA_GPUS, *gpuhunt.KNOWN_AMD_GPUS)}
    known.add(("MI325X", 256))  # gpuhunt's Vultr offers: the 256 GB AMD shipped, not its list's 288
    catalogue = set(specs.load_catalogue()["gpu"])
    used = {
        **price_refresh.GPUHUNT_NAMES,
        **{k: v for k, forms in price_refresh.FORMS.items() for v in forms.values()},
    }
    assert set(price_refresh.GPUHUNT_NAMES) | set(price_refresh.FORMS) <= known
    assert set(used.values()) <= catalogue
    # the catalogue GPUs gpuhunt has a name for, each reachable
    mapped = set(price_refresh.GPUHUNT_NAMES.values()) | {
        v for f in price_refresh.FORMS.values() for v in f.values()
    }
    assert {"A40", "V100 SXM2 16GB", "RTX A4000", "RTX A5000", "H100 SXM5", "H100 PCIe"} <= mapped


def test_an_a100_or_h100_is_placed_by_its_instance_or_left_out():
    place = price_refresh.catalogue_gpu
    assert place("lambdalabs", "H100", 80, "gpu_1x_h100_pcie") == "H100 PCIe"
    assert place("lambdalabs", "H100", 80, "gpu_8x_h100_sxm5") == "H100 SXM5"
    assert place("aws", "A100", 40, "p4d.24xlarge") == "A100 SXM4 40GB"
    assert place("runpod", "A100", 80, "NVIDIA A100 80GB") is None  # PCIe or SXM: the offer does not say
    assert place("aws", "V100", 32, "p3dn.24xlarge") == "V100 SXM2 32GB"
    assert place("runpod", "MI300X", 192, "AMD Instinct MI300X") == "Instinct MI300X"


def test_offers_become_dated_per_gpu_rows_of_the_cloud_schema():
    rows, skipped = price_refresh.offers_to_rows(recorded_offers(), TODAY)
    by = {(r["gpu"], r["provider"], r["kind"], r["region"]): r for r in rows}
    p4d = by[("A100 SXM4 40GB", "aws", "on-demand", "us-east-1")]
    assert p4d["usd_per_hour"] == pytest.approx(32.7726 / 8) and p4d["gpus_per_offering"] == 8
    assert by[("A100 SXM4 40GB", "aws", "spot", "us-east-1")]["usd_per_hour"] == pytest.approx(9.8318 / 8)
    assert by[("GeForce RTX 4090", "runpod", "on-demand", "EU-SE-1")]["usd_per_hour"] == pytest.approx(0.345)
    assert {r["date"] for r in rows} == {"2026-12-05"} and {r["source_url"] for r in rows} == {
        price_refresh.GPUHUNT_URL
    }
    assert "p4d.24xlarge in us-east-1: $32.7726/hour for 8 GPUs" in p4d["note"]
    assert skipped == {
        "not an NVIDIA or AMD GPU offer": 1,  # the CPU instance
        "A10G 24 GB: not one catalogue GPU": 1,
        "A100 80 GB: not one catalogue GPU": 1,
    }
    assert len(rows) == 13
    # an AMD offer comes through the same refresh as the NVIDIA ones
    assert by[("Instinct MI300X", "runpod", "on-demand", "EU-RO-1")]["usd_per_hour"] == pytest.approx(2.49)


def test_refresh_writes_the_user_level_file_and_every_command_merges_it(prices_dir, capsys):
    done = price_refresh.refresh(fetch=recorded_offers, today=TODAY)
    assert done["path"] == prices_dir / resources.REFRESHED_NAME and done["rows"] == 13
    assert done["providers"] == 3 and done["gpus"] == 10
    written = prices.read_price_file(done["path"], "cloud", today=TODAY)
    assert len(written) == 13 and set(written["region"]) >= {"us-east-1", "EU-RO-1"}
    book = prices.load_prices(today=TODAY)
    a4000 = book.cloud[(book.cloud["gpu"] == "RTX A4000") & (book.cloud["provider"] == "runpod")]
    assert (a4000["date"] == "2026-12-05").any() and a4000["usd_per_hour"].min() == pytest.approx(0.25)
    # the shipped file is untouched, and its rows are all still there
    assert len(book.cloud) >= len(prices.read_price_file(prices.CLOUD_PATH, "cloud", today=TODAY))
    # a cached answer is keyed by the refreshed file too
    from gpukit import cache

    assert done["path"] in cache.data_files()


def test_offline_refresh_says_so_in_one_line_and_keeps_what_is_there(prices_dir, monkeypatch, capsys):
    kept = prices_dir / resources.REFRESHED_NAME
    price_refresh.refresh(fetch=recorded_offers, today=TODAY)
    before = kept.read_bytes()

    def offline():
        raise price_refresh.NoNetwork("could not reach gpuhunt's catalogue (GPUHuntError)")

    monkeypatch.setattr(price_refresh, "fetch_offers", offline)
    assert cli.main(["prices", "refresh"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == (
        "gpukit: no network: could not reach gpuhunt's catalogue (GPUHuntError); the shipped prices stay in use.\n"
    )
    assert kept.read_bytes() == before
    monkeypatch.setattr(price_refresh, "fetch_offers", recorded_offers)
    assert cli.main(["prices", "refresh"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("Refreshed 13 cloud offers of 10 catalogue GPUs from 3 providers")
    assert line.startswith("Refreshed 13") and "1 not an NVIDIA or AMD GPU offer" in line
    assert cli.main(["prices", "where"]) == 0
    assert "13 offers of 10 GPUs from 3 providers" in capsys.readouterr().out
