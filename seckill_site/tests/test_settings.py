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

    assert settings.CELERY_BROKER_URL != settings.CACHES["default"]["LOCATION"]


def test_the_gunicorn_config_of_make_run_and_production_loads():
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="seckill_site.settings.test")
    result = subprocess.run(
        [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "--check-config", "seckill_site.wsgi"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_make_run_serves_through_gunicorn_and_make_dev_through_runserver():
    from tools import run

    assert run.CHILDREN["web"][1:3] == ["-m", "gunicorn"] and "deploy/gunicorn.conf.py" in run.CHILDREN["web"]
    assert "runserver" in run.WEB_DEV and "--noreload" not in run.WEB_DEV
