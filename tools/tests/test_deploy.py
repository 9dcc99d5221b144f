"""A deployment the harness starts draws the driver's draw sales: it shares the driver's draw key."""

from sales import draw_seed
from tools.deploy import Deployment


def test_a_deployment_derives_the_seeds_of_the_draws_its_driver_commits(settings, tmp_path):
    deployment = Deployment(log_dir=tmp_path, celery_concurrency=1)
    commitment = draw_seed.seed_commit()  # as the driver sets a sale to draw
    assert deployment.env["SECRET_KEY"] != settings.SECRET_KEY  # its own sessions' key
    settings.SECRET_KEY = deployment.env["SECRET_KEY"]  # the deployment's settings, as its env makes them
    settings.DRAW_SEED_KEY = deployment.env["DRAW_SEED_KEY"]
    seed = draw_seed.seed_reveal(nonce=commitment.nonce, sha256=commitment.sha256)
    assert draw_seed.sha256_hex(seed) == commitment.sha256
