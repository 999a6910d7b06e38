"""`vaultmem service`: the rendered systemd unit and launchd plist, install/uninstall into a temp
home with an injected command runner, the CLI commands, and a unit whose ExecStart really runs
the daemon. Nothing here touches the real service manager or the real home."""

from __future__ import annotations

import json
import os
import plistlib
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from vaultmem.cli.main import cli
from vaultmem.cli.service import ServiceHost
from vaultmem.config import load_settings
from vaultmem.errors import ConfigError, DaemonError
from vaultmem.install import installer as si
from vaultmem.install import units
from vaultmem_testing.daemon import wait_until

ODD_NAME = 'my vault %h $HOME "q" \\x'


class FakeRunner:
    """Records commands; answers 0 unless a command starts with a prefix given in `answers`."""

    def __init__(self, answers: dict[tuple[str, ...], si.CommandResult] | None = None) -> None:
        self.answers = answers or {}
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, argv: Sequence[str]) -> si.CommandResult:
        self.calls.append(tuple(argv))
        for prefix, result in self.answers.items():
            if tuple(argv[: len(prefix)]) == prefix:
                return result
        return si.CommandResult(0)


UNREACHABLE = {("systemctl", "--user", "show-environment"):
               si.CommandResult(1, "", "Failed to connect to bus"),
               ("launchctl", "print"): si.CommandResult(113, "", "Could not find domain")}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    folder = tmp_path / "vaults" / "Sample Vault"
    folder.mkdir(parents=True)
    (folder / "note.md").write_text("# A note\n\nSomething worth finding again.\n")
    return folder


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def spec_for(vault: Path, **options: Any) -> units.ServiceSpec:
    data_dir = load_settings(overrides={"vault": vault}).vault_data_dir()
    return units.make_spec(vault, data_dir, **options)


def literal(text: str, marks: str) -> str:
    """Undo the doubling of systemd's expansion marks; a single one would be expanded."""
    def undouble(match: re.Match[str]) -> str:
        assert match.group(2) is None, f"{match.group(0)!r} would be expanded in {text!r}"
        return match.group(1)[0]
    return re.sub(f"([{marks}])(?:\\1|(.?))", undouble, text)


def exec_start(unit: str) -> list[str]:
    """ExecStart's argv as systemd reads it: `%%`, `$$`, then quotes and backslashes."""
    line = next(x for x in unit.splitlines() if x.startswith("ExecStart="))
    return shlex.split(literal(line.removeprefix("ExecStart="), "%$"))


def unit_environment(unit: str) -> dict[str, str]:
    pairs = [shlex.split(literal(x.removeprefix("Environment="), "%"))[0]
             for x in unit.splitlines() if x.startswith("Environment=")]
    return dict(pair.split("=", 1) for pair in pairs)


# rendering ----------------------------------------------------------------------------------

def systemd_problems(unit_file: Path, tmp_path: Path) -> list[str]:
    """What `systemd-analyze --user verify` says about the unit file (empty when clean)."""
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "SYSTEMD_LOG_COLOR": "0"}
    done = subprocess.run(["systemd-analyze", "--user", "verify", str(unit_file)], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    lines = (done.stdout + done.stderr).splitlines()
    problems = [line for line in lines if unit_file.name in line]
    return problems if done.returncode == 0 else [f"exit {done.returncode}", *lines]


needs_systemd_analyze = pytest.mark.skipif(
    shutil.which("systemd-analyze") is None,
    reason="systemd-analyze is not installed (Debian package: systemd)")


@needs_systemd_analyze
@pytest.mark.timeout(120)
def test_systemd_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    odd = tmp_path / ODD_NAME
    odd.mkdir()
    config = tmp_path / "conf %d.toml"
    config.write_text("")
    spec = spec_for(odd, config=config)
    unit = units.render_systemd_unit(spec)
    unit_file = tmp_path / "units" / f"vaultmem-{spec.slug}.service"
    unit_file.parent.mkdir()
    unit_file.write_text(unit)
    assert systemd_problems(unit_file, tmp_path) == []
    # the check is real: a misspelt key and a missing binary are both reported
    unit_file.write_text(unit.replace("RestartSec=", "RestartSecs="))
    assert any("RestartSecs" in p for p in systemd_problems(unit_file, tmp_path))
    unit_file.write_text(unit.replace(str(spec.python), str(tmp_path / "no-python")))
    assert systemd_problems(unit_file, tmp_path)


def test_systemd_unit_content(tmp_path: Path) -> None:
    odd = tmp_path / ODD_NAME
    odd.mkdir()
    config = tmp_path / "conf %d.toml"
    config.write_text("")
    spec = spec_for(odd, config=config)
    unit = units.render_systemd_unit(spec)
    argv = exec_start(unit)
    assert argv == [sys.executable, "-m", "vaultmem", "run", "--vault", str(odd.resolve()),
                    "--config", str(config.resolve())]
    assert all(Path(argv[i]).is_absolute() and Path(argv[i]).exists() for i in (0, 5, 7))
    assert unit_environment(unit) == {
        "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
        "VAULTMEM_DATA_DIR": str(spec.data_dir)}
    for line in ("Type=simple", "Restart=on-failure", "RestartSec=5", "TimeoutStopSec=30",
                 "WantedBy=default.target", "StandardOutput=journal"):
        assert line in unit.splitlines()


def test_launchd_plist(vault: Path, home: Path) -> None:
    spec = spec_for(vault)
    text = units.render(spec, platform="darwin", home=home)
    agent = plistlib.loads(text.encode())
    assert agent["Label"] == f"md.vaultmem.{spec.slug}"
    args = agent["ProgramArguments"]
    assert args == [sys.executable, "-m", "vaultmem", "run", "--vault", str(vault.resolve())]
    assert Path(args[0]).is_absolute() and Path(args[0]).is_file()
    assert Path(args[5]).is_absolute() and Path(args[5]).is_dir()
    assert agent["RunAtLoad"] is True
    assert agent["KeepAlive"] == {"SuccessfulExit": False}
    env = agent["EnvironmentVariables"]
    assert env["HF_HUB_OFFLINE"] == "1" and env["TRANSFORMERS_OFFLINE"] == "1"
    assert env["VAULTMEM_DATA_DIR"] == str(spec.data_dir)
    log = home / "Library" / "Logs" / "vaultmem" / f"{spec.slug}.log"
    assert agent["StandardOutPath"] == agent["StandardErrorPath"] == str(log)


def test_slug_names_and_paths(vault: Path, home: Path) -> None:
    spec = spec_for(vault)
    assert spec.slug == units.service_slug(vault) and re.fullmatch(r"Sample-Vault-[0-9a-f]{8}",
                                                                 spec.slug)
    assert re.fullmatch(r"my-data-[0-9a-f]{8}", units.service_slug(Path("/x/.my data!")))
    assert units.unit_path("s", platform="linux", home=home) == (
        home / ".config/systemd/user/vaultmem-s.service")
    assert units.unit_path("s", platform="darwin", home=home) == (
        home / "Library/LaunchAgents/md.vaultmem.s.plist")
    with pytest.raises(ConfigError, match="Linux"):
        units.manager_kind("win32")


def test_spec_checks(vault: Path, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with pytest.raises(ConfigError, match="vault folder"):
        units.make_spec(tmp_path / "missing", data_dir)
    with pytest.raises(ConfigError, match="config file"):
        units.make_spec(vault, data_dir, config=tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match="python"):
        units.make_spec(vault, data_dir, python=tmp_path / "no-python")
    bad = tmp_path / "line\nbreak"
    bad.mkdir()
    with pytest.raises(ConfigError, match="control characters"):
        units.make_spec(bad, data_dir)


# install / uninstall --------------------------------------------------------------------------

def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_dry_run_writes_and_runs_nothing(vault: Path, home: Path) -> None:
    runner = FakeRunner()
    outcome = si.install(spec_for(vault), platform="linux", home=home, runner=runner,
                         dry_run=True)
    assert files_under(home) == [] and runner.calls == []
    assert outcome.changed and outcome.content and "ExecStart=" in outcome.content
    assert outcome.todo[-1].startswith("systemctl --user enable --now vaultmem-")


def test_install_writes_unit_and_starts_it(vault: Path, home: Path) -> None:
    spec, runner = spec_for(vault), FakeRunner()
    outcome = si.install(spec, platform="linux", home=home, runner=runner)
    path = home / ".config/systemd/user" / f"vaultmem-{spec.slug}.service"
    assert outcome.file == str(path) and outcome.changed and outcome.manager_available
    assert path.read_text() == units.render_systemd_unit(spec)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert runner.calls == [("systemctl", "--user", "show-environment"),
                            ("systemctl", "--user", "daemon-reload"),
                            ("systemctl", "--user", "enable", "--now", path.name)]
    again = si.install(spec, platform="linux", home=home, runner=FakeRunner())
    assert not again.changed and again.notes == []


def test_install_refuses_a_different_unit_without_force(vault: Path, home: Path,
                                                        tmp_path: Path) -> None:
    spec = spec_for(vault)
    si.install(spec, platform="linux", home=home, runner=FakeRunner())
    path = Path(units.unit_path(spec.slug, platform="linux", home=home))
    config = tmp_path / "other.toml"
    config.write_text("")
    other = spec_for(vault, config=config)
    with pytest.raises(ConfigError, match="--force"):
        si.install(other, platform="linux", home=home, runner=FakeRunner())
    assert path.read_text() == units.render_systemd_unit(spec)
    preview = si.install(other, platform="linux", home=home, dry_run=True)
    assert "--force" in preview.notes[0] and path.read_text() == units.render_systemd_unit(spec)
    runner = FakeRunner()
    si.install(other, platform="linux", home=home, runner=runner, force=True)
    assert path.read_text() == units.render_systemd_unit(other)
    assert runner.calls[-1] == ("systemctl", "--user", "try-restart", path.name)


def test_install_without_a_reachable_manager_prints_the_commands(vault: Path,
                                                                 home: Path) -> None:
    runner = FakeRunner(UNREACHABLE)
    outcome = si.install(spec_for(vault), platform="linux", home=home, runner=runner)
    assert Path(outcome.file).is_file() and outcome.manager_available is False
    assert len(runner.calls) == 1
    assert outcome.todo == ["systemctl --user daemon-reload",
                            f"systemctl --user enable --now {outcome.name}"]


def test_a_failing_manager_command_is_an_error(vault: Path, home: Path) -> None:
    runner = FakeRunner({("systemctl", "--user", "enable"):
                         si.CommandResult(1, "", "Unit is masked.")})
    with pytest.raises(DaemonError, match=r"enable --now .*exit 1.*masked"):
        si.install(spec_for(vault), platform="linux", home=home, runner=runner)


def test_uninstall(vault: Path, home: Path) -> None:
    spec = spec_for(vault)
    si.install(spec, platform="linux", home=home, runner=FakeRunner())
    path = units.unit_path(spec.slug, platform="linux", home=home)
    preview = si.uninstall(spec.slug, platform="linux", home=home, runner=FakeRunner(),
                           dry_run=True)
    assert path.is_file() and preview.todo[1] == f"rm {path}"
    runner = FakeRunner()
    outcome = si.uninstall(spec.slug, platform="linux", home=home, runner=runner)
    assert outcome.changed and not path.exists()
    assert runner.calls[1:] == [("systemctl", "--user", "disable", "--now", path.name),
                                ("systemctl", "--user", "daemon-reload")]
    nothing = si.uninstall(spec.slug, platform="linux", home=home, runner=FakeRunner())
    assert not nothing.changed and nothing.ran == [] and nothing.todo == []


def test_uninstall_without_a_reachable_manager(vault: Path, home: Path) -> None:
    spec = spec_for(vault)
    si.install(spec, platform="linux", home=home, runner=FakeRunner())
    path = units.unit_path(spec.slug, platform="linux", home=home)
    wants = path.parent / "default.target.wants" / path.name
    wants.parent.mkdir()
    wants.symlink_to(path)  # what `systemctl --user enable` leaves
    outcome = si.uninstall(spec.slug, platform="linux", home=home,
                           runner=FakeRunner(UNREACHABLE))
    assert not path.exists() and not wants.is_symlink()
    assert outcome.todo == [f"systemctl --user stop {path.name}"]


def test_launchd_install_and_uninstall(vault: Path, home: Path) -> None:
    spec = spec_for(vault)
    domain, label = f"gui/{os.getuid()}", f"md.vaultmem.{spec.slug}"
    runner = FakeRunner({("launchctl", "bootout"): si.CommandResult(3, "", "No such process")})
    outcome = si.install(spec, platform="darwin", home=home, runner=runner)
    path = home / "Library/LaunchAgents" / f"{label}.plist"
    assert outcome.file == str(path) and plistlib.loads(path.read_bytes())["Label"] == label
    assert (home / "Library/Logs/vaultmem").is_dir()
    assert runner.calls == [("launchctl", "print", domain),
                            ("launchctl", "bootout", f"{domain}/{label}"),
                            ("launchctl", "bootstrap", domain, str(path))]
    runner = FakeRunner()
    si.uninstall(spec.slug, platform="darwin", home=home, runner=runner)
    assert not path.exists()
    assert runner.calls[1:] == [("launchctl", "bootout", f"{domain}/{label}")]


def test_status_reads_the_managers_view(vault: Path, home: Path) -> None:
    spec = spec_for(vault)
    name = f"vaultmem-{spec.slug}.service"
    systemd = FakeRunner({("systemctl", "--user", "is-active"): si.CommandResult(0, "active\n"),
                          ("systemctl", "--user", "is-enabled"):
                          si.CommandResult(0, "enabled\n"),
                          ("systemctl", "--user", "show"): si.CommandResult(0, "4242\n")})
    view = si.status(spec.slug, spec.data_dir, platform="linux", home=home, runner=systemd)
    assert view["name"] == name and view["installed"] is False
    assert (view["state"], view["enabled"], view["pid"]) == ("active", "enabled", 4242)
    assert view["daemon"] == {"answers": False, "url": None}
    printed = f"{spec.slug} = {{\n\tstate = running\n\tpid = 77\n}}\n"
    launchd = FakeRunner({("launchctl", "print", f"gui/{os.getuid()}/md.vaultmem.{spec.slug}"):
                          si.CommandResult(0, printed)})
    view = si.status(spec.slug, spec.data_dir, platform="darwin", home=home, runner=launchd)
    assert (view["state"], view["pid"]) == ("running", 77)
    view = si.status(spec.slug, spec.data_dir, platform="darwin", home=home,
                     runner=FakeRunner(UNREACHABLE))
    assert view["manager_available"] is False and view["state"] is None


# the CLI ------------------------------------------------------------------------------------

def invoke(args: list[str], host: ServiceHost) -> Result:
    return CliRunner().invoke(cli, ["service", *args], obj=host, catch_exceptions=False)


def invoke_json(args: list[str], host: ServiceHost) -> Any:
    result = invoke([*args, "--json"], host)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_cli_install_status_uninstall(vault: Path, home: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULTMEM_PORT", "7399")
    host = ServiceHost(platform="linux", home=home, runner=FakeRunner())
    preview = invoke(["install", "--vault", str(vault), "--dry-run"], host)
    assert preview.exit_code == 0 and "ExecStart=" in preview.stdout
    assert files_under(home) == []
    done = invoke_json(["install", "--vault", str(vault)], host)
    assert Path(done["file"]).is_file() and done["ran"][-1]["returncode"] == 0
    assert "VAULTMEM_PORT" in done["notes"][0]
    shown = invoke_json(["status", "--vault", str(vault)], host)
    assert shown["installed"] is True and shown["file"] == done["file"]
    assert shown["daemon"]["answers"] is False
    human = invoke(["status", "--vault", str(vault)], host)
    assert "installed" in human.stdout and "no daemon answers" in human.stdout
    removed = invoke_json(["uninstall", "--vault", str(vault)], host)
    assert removed["changed"] is True and not Path(done["file"]).exists()


def test_cli_passes_the_config_in_use_and_refuses_to_overwrite(vault: Path, home: Path) -> None:
    host = ServiceHost(platform="linux", home=home, runner=FakeRunner())
    config = Path(os.environ["VAULTMEM_CONFIG"])
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'vault = "{vault}"\n')
    done = invoke_json(["install"], host)
    assert exec_start(Path(done["file"]).read_text())[-2:] == ["--config", str(config)]
    config.unlink()
    refused = CliRunner().invoke(cli, ["service", "install", "--vault", str(vault)], obj=host)
    assert refused.exit_code == 1 and "--force" in refused.stderr
    missing = CliRunner().invoke(cli, ["service", "install", "--vault", str(vault),
                                       "--config", str(config)], obj=host)
    assert missing.exit_code == 1 and "config file does not exist" in missing.stderr


def _two_vaults(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """Vaults C and D whose custom data folders are both called `vaultmem-data`."""
    folders = []
    for name in ("C", "D"):
        vault = tmp_path / name / "Notes"
        vault.mkdir(parents=True)
        folders += [vault, tmp_path / name / "vaultmem-data"]
    return folders[0], folders[1], folders[2], folders[3]


def test_vaults_with_same_named_data_folders_get_their_own_units(
    tmp_path: Path, home: Path
) -> None:
    vault_c, data_c, vault_d, data_d = _two_vaults(tmp_path)
    spec_c, spec_d = units.make_spec(vault_c, data_c), units.make_spec(vault_d, data_d)
    assert spec_c.slug != spec_d.slug
    runner = FakeRunner()
    si.install(spec_c, platform="linux", home=home, runner=runner)
    view = si.status(spec_d.slug, data_d, platform="linux", home=home, runner=runner,
                     vault=vault_d)
    assert view["installed"] is False
    gone = si.uninstall(spec_d.slug, platform="linux", home=home, runner=runner, vault=vault_d)
    assert gone.changed is False
    assert units.unit_path(spec_c.slug, platform="linux", home=home).is_file()


@pytest.mark.parametrize("platform", ["linux", "darwin"])
def test_another_vaults_unit_is_never_replaced_or_removed(
    tmp_path: Path, home: Path, platform: str
) -> None:
    """A unit of the older naming (after the data folder) that runs vault C."""
    vault_c, data_c, vault_d, data_d = _two_vaults(tmp_path)
    legacy = replace(units.make_spec(vault_c, data_c), slug="vaultmem-data")
    si.install(legacy, platform=platform, home=home, runner=FakeRunner())
    path = units.unit_path("vaultmem-data", platform=platform, home=home)
    before = path.read_bytes()
    intruder = replace(units.make_spec(vault_d, data_d), slug="vaultmem-data")
    for force in (False, True):
        with pytest.raises(ConfigError, match=f"belongs to the vault {vault_c}"):
            si.install(intruder, platform=platform, home=home, runner=FakeRunner(), force=force)
    with pytest.raises(ConfigError, match="vaultmem leaves it alone"):
        si.uninstall("vaultmem-data", platform=platform, home=home, runner=FakeRunner(),
                     vault=vault_d)
    view = si.status("vaultmem-data", data_d, platform=platform, home=home,
                     runner=FakeRunner(), vault=vault_d)
    assert view["installed"] is False and path.read_bytes() == before


def test_the_cli_finds_this_vaults_old_unit_and_leaves_other_vaults_alone(
    tmp_path: Path, home: Path
) -> None:
    vault_c, data_c, vault_d, data_d = _two_vaults(tmp_path)
    host = ServiceHost(platform="linux", home=home, runner=FakeRunner())
    si.install(replace(units.make_spec(vault_c, data_c), slug="vaultmem-data"), platform="linux",
               home=home, runner=FakeRunner())
    old = units.unit_path("vaultmem-data", platform="linux", home=home)
    for_d = ["--vault", str(vault_d), "--data-dir", str(data_d)]
    assert invoke_json(["status", *for_d], host)["installed"] is False
    assert invoke_json(["uninstall", *for_d], host)["changed"] is False and old.is_file()
    for_c = ["--vault", str(vault_c), "--data-dir", str(data_c)]
    shown = invoke_json(["status", *for_c], host)
    assert shown["installed"] is True and shown["file"] == str(old)
    assert invoke_json(["uninstall", *for_c], host)["changed"] is True and not old.exists()


# the unit really runs the daemon ------------------------------------------------------------

@pytest.fixture
def unit_process(vault: Path, home: Path) -> Iterator[tuple[subprocess.Popen[bytes], ServiceHost]]:
    """Install into a temp home, then start the unit's ExecStart as systemd would."""
    host = ServiceHost(platform="linux", home=home, runner=FakeRunner())
    done = invoke_json(["install", "--vault", str(vault)], host)
    unit = Path(done["file"]).read_text()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")},
           **unit_environment(unit), "VAULTMEM_EMBEDDING_MODEL": "fake", "VAULTMEM_PORT": "0"}
    proc = subprocess.Popen(exec_start(unit), env=env, cwd=home, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        yield proc, host
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        if proc.stderr is not None:
            proc.stderr.close()


@pytest.mark.timeout(120)
def test_the_units_command_runs_a_daemon_that_status_finds(
        vault: Path, unit_process: tuple[subprocess.Popen[bytes], ServiceHost]) -> None:
    proc, host = unit_process

    def answers() -> bool:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        shown = invoke_json(["status", "--vault", str(vault)], host)
        return bool(shown["daemon"]["answers"])

    wait_until(answers, timeout=90, step=0.2)
    shown = invoke_json(["status", "--vault", str(vault)], host)
    assert shown["installed"] is True and shown["daemon"]["url"].startswith("http://127.0.0.1:")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
