"""Reading /metrics as the scraper does."""

from prometheus_client.parser import text_string_to_metric_families


def scrape(text: str) -> dict[tuple[str, tuple], float]:
    """{(sample name, sorted labels): value} of a /metrics answer."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


# The scraper's token: no peer, loopback included, is trusted by default.
TOKEN = "test-scrape-token"


SCRAPER = {"Authorization": f"Bearer {TOKEN}"}
