"""What the tests share: factories, fixtures, shoppers, browsers and the data several apps' tests
use (CONTRIBUTING.md, "Test helpers"). Tests import it; the shop never does."""
