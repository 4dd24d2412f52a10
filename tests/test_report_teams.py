"""Issue 22's evidence in the report: the collusion page's teams (the group screen, with their hands replayed)
and victims, the information page's hands to replay, and the findings that link them; on simulated rooms with a
planted team of three and a planted player who sees every hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import polars as pl
import pytest
from rooms import simulated_room
from test_report import _browse, _chromium

from dashboards import collusion as collusion_dash
from dashboards import information as info_dash
from dashboards.pages.players import page_file
from dashboards.site import build_report
from pipeline.analytics.queries import connect
from pipeline.audit import collusion
from pipeline.audit.anticipation import decisions
from pipeline.audit.information import best_dodges, dodges
from pipeline.audit.replay import stored_record
from pipeline.audit.victims import Victim, _flow_runs, victim_view
from pipeline.game.record import parse_record
from pipeline.rules.tiles import kind_of_name


@pytest.fixture(scope="module")
def planted(team_room: tuple[Path, dict[str, object]]) -> tuple[str, ...]:
    (team,) = [tuple(sorted(c["players"])) for c in team_room[1]["colluders"]]  # type: ignore[index,union-attr]
    return team


VICTIM_PAYS = 6  # points a hand the planted victim pays each member of the team beyond the room's own flows
asked: list[tuple[tuple[str, ...], ...]] = []  # the teams the report asked the victim view about


def _planted_victim_view(
    con: duckdb.DuckDBPyConnection, *, teams: list[tuple[str, ...]], min_hands: int = 200, fdr: float = 0.05
) -> list[Victim]:
    """The victim view of the room's own flows (``sql/net_flows.sql``), with the first player outside the
    teams paying each teammate :data:`VICTIM_PAYS` points more in every hand they share: the simulator plants no
    victim, and the victim view itself is tested in tests/test_victims.py."""
    asked.append(tuple(teams))
    flows = pl.concat(list(_flow_runs(con)))
    members = sorted({p for t in teams for p in t})
    victim = next(p for p in sorted(flows["payer"].unique().to_list()) if p not in members)
    extra = pl.when((pl.col("payer") == victim) & pl.col("payee").is_in(members)).then(VICTIM_PAYS).otherwise(0)
    back = pl.when((pl.col("payee") == victim) & pl.col("payer").is_in(members)).then(VICTIM_PAYS).otherwise(0)
    flows = flows.with_columns((pl.col("net") + extra - back).alias("net"))
    return victim_view(flows, teams=teams, min_hands=min_hands, fdr=fdr)


@pytest.fixture(scope="module")
def team_report(
    team_room: tuple[Path, dict[str, object]], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, int]:
    """The report of the team room, and how many times the warehouse was read for the pair and group screens."""
    opened = 0
    original = collusion.WarehouseSource.__enter__

    def counted(self: collusion.WarehouseSource) -> collusion.WarehouseSource:
        nonlocal opened
        opened += 1
        return original(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(collusion.WarehouseSource, "__enter__", counted)
        mp.setattr(collusion_dash, "victim_view", _planted_victim_view)
        index = build_report(team_room[0], tmp_path_factory.mktemp("team-report") / "out", min_hands=150)
    return index, opened


def _ids(page: Path) -> set[str]:
    return set(re.findall(r'id="([^"]+)"', page.read_text(encoding="utf-8")))


def test_the_screen_reports_the_team_with_its_hands_and_its_victims(
    team_room: tuple[Path, dict[str, object]], planted: tuple[str, ...]
) -> None:
    warehouse, labels = team_room
    with connect(warehouse) as con, pytest.MonkeyPatch.context() as mp:
        mp.setattr(collusion_dash, "victim_view", _planted_victim_view)
        screen = collusion_dash.screen_pairs(con, min_hands=150)
        teams = collusion_dash.prep_teams(screen)
        evidence = collusion_dash.prep_team_evidence(con, screen)
    assert [tuple(p) for p in teams["players"].to_list()] == [planted]
    assert teams["q"][0] <= 0.05 and teams["feeding_z"][0] > 3 and teams["hands"][0] > 500
    assert evidence.height and set(evidence["rank"].to_list()) == {1}
    for h in evidence.iter_rows(named=True):  # each hand replayed from its source, one member on another's tile
        assert h["replay"].startswith(f"hand {h['hand_id']} ") and " won " in f" {h['why']} "
        assert sum(p in h["why"] for p in planted) >= 2
    assert asked[-1] == (planted,)  # the victim view is asked about the team the group screen reports
    victims = collusion_dash.prep_victims(screen)
    assert victims["rank"].to_list() == list(range(1, victims.height + 1))
    assert victims["q"].to_list() == sorted(victims["q"].to_list()) and (victims["q"] <= 0.05).all()
    with_team = victims.filter(kind="team")
    assert with_team.height and all(tuple(t) == planted for t in with_team["to"].to_list())
    honest = set(labels["players"]) - set(planted)  # type: ignore[arg-type]
    assert set(with_team["player"].to_list()) <= honest
    assert (with_team["with_per_hand"] > with_team["without_per_hand"]).all()  # they lose more with the team


def test_the_pair_screen_alone_has_no_teams(team_room: tuple[Path, dict[str, object]]) -> None:
    with connect(team_room[0]) as con:
        screen = collusion_dash.screen_pairs(con, min_hands=150, teams=False)
    assert screen.pairs and not screen.teams and not screen.victims
    assert collusion_dash.prep_teams(screen).height == 0 and collusion_dash.prep_victims(screen).height == 0


def test_the_report_shows_the_team_and_the_victims_and_the_findings_link_them(
    team_report: tuple[Path, int], planted: tuple[str, ...]
) -> None:
    index, opened = team_report
    out = index.parent
    assert opened == 1  # the pair and group screens over one reading of the warehouse
    page = (out / "collusion.html").read_text(encoding="utf-8")
    team = page[page.index('<div class="team" id="team-1">') :]
    team = team[: team.index("</div>")]
    assert f"Team #1: {', '.join(planted)}</h3>" in team
    assert team.count('<div class="replay">hand ') >= 1 and "feeding z +" in team
    victims = page[page.index('<section id="victims">') :]
    victims = victims[: victims.index("</section>")]
    assert '<tr id="victim-1">' in victims
    for p in planted:  # the team, linked to its members' pages
        assert f'<a href="{page_file(p)}">{p}</a>' in victims
    found = json.loads((out / "findings.json").read_text(encoding="utf-8"))
    teams = [f for f in found if f["kind"] == "team"]
    assert [(tuple(f["players"]), f["evidence"], f["severity"]) for f in teams] == [
        (planted, "collusion.html#team-1", "high")
    ]
    losers = [f for f in found if f["kind"] == "victim"]
    assert losers and all(f["severity"] == "medium" and " loses to " in f["subject"] for f in losers)
    assert [f["evidence"] for f in losers] == [f"collusion.html#victim-{k}" for k in range(1, len(losers) + 1)]
    order = {"high": 0, "medium": 1, "low": 2}
    assert [order[f["severity"]] for f in found] == sorted(order[f["severity"]] for f in found)
    for f in found:  # every finding's evidence is an element of its page
        file, _, anchor = f["evidence"].partition("#")
        assert not anchor or anchor in _ids(out / file), f["evidence"]


def test_the_browser_shows_the_team_and_its_hands(team_report: tuple[Path, int], tmp_path: Path) -> None:
    chromium = _chromium()
    page = team_report[0].parent / "collusion.html"
    done = _browse(chromium, tmp_path / "profile", "--dump-dom", page.resolve().as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert '<section id="teams">' in dom and 'id="team-1"' in dom and '<section id="victims">' in dom
    assert re.search(r'<div class="team" id="team-1">.*?<details>.*?<div class="replay">hand ', dom, re.S)


# ---------------------------------------------------------------------------------------------- information
@pytest.fixture(scope="module")
def bot_room(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """900 hands of 8 players, one of whom sees every hand (as tests/test_information.py's)."""
    return simulated_room(tmp_path_factory.mktemp("bot"), "bot=1", 11, 900)


def test_a_dodge_is_a_safe_discard_while_a_dangerous_tile_as_good_was_held(
    bot_room: tuple[Path, dict[str, object]],
) -> None:
    warehouse, labels = bot_room
    (bot,) = labels["bots"]  # type: ignore[misc]
    with connect(warehouse) as con:
        hands = best_dodges(con, bot)
        assert len(hands) == 5
        counts = [len(d) for _, d in hands]
        assert counts == sorted(counts, reverse=True) and counts[0] >= 5
        for hand_id, found in hands:
            record = parse_record(stored_record(con, hand_id).record)
            seat = record.players.index(bot)
            assert dodges(record, seat) == found
            events = con.execute(
                "SELECT idx, t, player, coalesce(len(could_win), 0) FROM events WHERE hand_id = ?", [hand_id]
            ).fetchall()
            by_idx = {i: (t, p, n) for i, t, p, n in events}
            for d in found:  # the warehouse says the same: the bot's discard, nobody could win on it
                assert by_idx[d.event] == ("discard", bot, 0) and d.seat == seat
                assert d.held and d.thrown not in d.held and d.waiting and seat not in d.waiting
                assert record.que is None or kind_of_name(d.thrown) // 9 != record.que[seat]  # not its void suit
    # a record without every hand (here: a settlement) has none
    settled = {
        "format": "xzlog/1",
        "hand_id": "w1",
        "level": "settlement",
        "ruleset": "chengdu",
        "players": ["a", "b", "c", "d"],
        "dealer": 0,
        "events": [{"t": "hu", "seat": 1, "from": 2}],
    }
    assert dodges(parse_record(settled), 2) == []


def test_the_information_page_replays_the_flagged_player_s_hands(
    bot_room: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    warehouse, labels = bot_room
    (bot,) = labels["bots"]  # type: ignore[misc]
    with connect(warehouse) as con:
        seers = info_dash.screen(con)
        df = info_dash.prep_evidence(con, seers)
        waits = info_dash.prep_anticipation(con, seers)
        for hand_id, event, margin in waits.select("hand_id", "event", "margin").rows():
            record = parse_record(stored_record(con, hand_id).record)
            (d,) = [d for d in decisions(record, record.players.index(bot)) if d.event == event]
            assert d.hit and d.margin == margin > 0  # the replay judges the same wait
    assert [s.player for s in seers if s.flagged] == [bot]
    assert df["player"].unique().to_list() == [bot] and df["rank"].unique().to_list() == [1] and df.height == 5
    assert all(r.startswith(f"hand {h} ") for h, r in zip(df["hand_id"], df["replay"], strict=True))
    assert waits.height == 5 and waits["rank"].unique().to_list() == [1]
    assert waits["margin"].to_list() == sorted(waits["margin"].to_list(), reverse=True)
    assert all(r.startswith(f"hand {h} ") for h, r in zip(waits["hand_id"], waits["replay"], strict=True))
    out = build_report(warehouse, tmp_path / "out").parent
    page = (out / "information.html").read_text(encoding="utf-8")
    hands = page[page.index('<div id="info-1-hands">') :]
    hands = hands[: hands.index("</div></details></div>") + 6]
    assert hands.count('<div class="replay">hand ') == 10 and "dodged a win" in hands
    assert hands.count('<details class="wait">') == 5 and "<h4>Waits on the tiles the wall held</h4>" in hands
    first = waits.row(0, named=True)
    assert f"waited on the wall ({first['what']})" in hands and " unseen, " in first["what"]
    assert '<a href="#info-1-hands"><b class="flag">yes</b></a> (dodges' in page  # the row links its hands
    found = json.loads((out / "findings.json").read_text(encoding="utf-8"))
    assert [f["evidence"] for f in found if f["kind"] == "information"] == ["information.html#info-1-hands"]
