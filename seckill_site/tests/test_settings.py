import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_production_settings_pass_check_deploy():
    env = dict(
        {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"},
        DJANGO_SETTINGS_MODULE="seckill_site.settings.production",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="shop.example.com",
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_broker_never_shares_the_cache_database():
    from django.conf import settings

    assert settings.CACHES["default"]["LOCATION"] == [settings.REDIS_URL]
    assert settings.CELERY_BROKER_URL != settings.REDIS_URL


def _settings_in_a_subprocess(code: str, **env: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, DJANGO_SETTINGS_MODULE="seckill_site.settings.local", **env)
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); from django.conf import settings; {code}"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_behind_pgbouncer_no_server_side_cursors():
    code = "print(settings.DATABASES['default'].get('DISABLE_SERVER_SIDE_CURSORS'))"
    assert _settings_in_a_subprocess(code, DATABASE_POOLER="pgbouncer").stdout.strip() == "True"
    assert _settings_in_a_subprocess(code, DATABASE_POOLER="").stdout.strip() == "None"
    assert "only 'pgbouncer'" in _settings_in_a_subprocess(code, DATABASE_POOLER="pgpool").stderr


def test_a_database_connection_is_given_up_after_the_connect_timeout():
    """libpq's connect_timeout is DATABASE_CONNECT_TIMEOUT, unless DATABASE_URL names its own."""
    code = "print(settings.DATABASES['default']['OPTIONS']['connect_timeout'])"
    assert _settings_in_a_subprocess(code, DATABASE_CONNECT_TIMEOUT="7").stdout.strip() == "7"
    url = os.environ["DATABASE_URL"] + ("&" if "?" in os.environ["DATABASE_URL"] else "?") + "connect_timeout=9"
    assert _settings_in_a_subprocess(code, DATABASE_CONNECT_TIMEOUT="7", DATABASE_URL=url).stdout.strip() == "9"


def test_a_kept_database_connection_to_a_vanished_host_is_found_dead():
    """TCP keepalives and tcp_user_timeout on every database connection, unless DATABASE_URL says."""
    code = "o = settings.DATABASES['default']['OPTIONS']; print(o['keepalives_idle'], o['tcp_user_timeout'])"
    assert _settings_in_a_subprocess(code).stdout.split() == ["5", "10000"]
    url = os.environ["DATABASE_URL"] + ("&" if "?" in os.environ["DATABASE_URL"] else "?") + "keepalives_idle=30"
    assert _settings_in_a_subprocess(code, DATABASE_URL=url).stdout.split() == ["30", "10000"]


def test_a_redis_cluster_needs_a_broker_of_its_own():
    """Celery's Redis transport cannot use a cluster, and a cluster has no second database."""
    env = {k: v for k, v in os.environ.items() if k != "CELERY_BROKER_URL"}
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=dict(env, DJANGO_SETTINGS_MODULE="seckill_site.settings.local", REDIS_URL="redis+cluster://127.0.0.1:7000"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0 and "CELERY_BROKER_URL" in result.stderr


def _production(code: str, **env_vars: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_ALLOW_ASYNC_UNSAFE", "SECRET_KEY", "DEBUG")}
    env.update(DJANGO_SETTINGS_MODULE="seckill_site.settings.production", ALLOWED_HOSTS="shop.example.com")
    env.update(env_vars)
    script = f"import django; django.setup(); from django.conf import settings; {code}"
    return subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_production_never_falls_back_to_the_development_key_or_debug():
    from seckill_site.settings.base import DEV_SECRET_KEY

    missing = _production("print(settings.SECRET_KEY)")
    assert missing.returncode != 0 and "SECRET_KEY" in missing.stderr and DEV_SECRET_KEY not in missing.stdout
    given_dev = _production("print(settings.SECRET_KEY)", SECRET_KEY=DEV_SECRET_KEY)
    assert given_dev.returncode != 0 and "development key" in given_dev.stderr
    debug = _production("print(settings.DEBUG)", SECRET_KEY=secrets.token_urlsafe(50), DEBUG="true")
    assert debug.returncode == 0 and debug.stdout.strip() == "False", debug.stderr


def test_the_production_deploy_check_stays_clean_with_debug_in_the_environment():
    env = dict(
        {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"},
        DJANGO_SETTINGS_MODULE="seckill_site.settings.production",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="shop.example.com",
        DEBUG="true",
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0 and "no issues" in result.stdout, result.stdout + result.stderr


def test_the_gunicorn_config_of_make_run_and_production_loads(tmp_path):
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="seckill_site.settings.test", PROMETHEUS_MULTIPROC_DIR=str(tmp_path))
    result = subprocess.run(
        [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "--check-config", "seckill_site.wsgi"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_make_run_serves_through_granian_and_make_dev_through_runserver(monkeypatch):
    from seckill_site import serve
    from tools import run

    assert run.CHILDREN["web"][1:3] == ["-m", "seckill_site.serve"]
    monkeypatch.setenv("RELOAD", "1")
    monkeypatch.setenv("WEB_CONCURRENCY", "3")
    launched = serve.command("127.0.0.1:8000")
    assert launched[1:3] == ["-m", "granian"] and "seckill_site.wsgi:application" in launched
    assert launched[launched.index("--workers") + 1] == "3" and "--reload" in launched
    monkeypatch.setenv("RELOAD", "0")
    assert "--reload" not in serve.command("127.0.0.1:8000")
    assert "runserver" in run.WEB_DEV and "--noreload" not in run.WEB_DEV
