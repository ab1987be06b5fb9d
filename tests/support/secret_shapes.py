"""A corpus of credential shapes, generated at run time: right shapes, random values, no real key.

Each shape is a line as a session would hold it (a header, an assignment, a URL, a key file) and the
distinctive part a leak would show: the tests look for that part in every request body. The values
are drawn from a seeded generator here, so no key-shaped literal is committed to the repository.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

__all__ = ["SecretShape", "secret_shapes"]

ALNUM = string.ascii_letters + string.digits
LOWER_HEX = "0123456789abcdef"
UPPER_ALNUM = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


@dataclass(frozen=True, slots=True)
class SecretShape:
    """One credential shape: its name, the line that carries it, and the part that must not leak."""

    name: str
    line: str
    secret: str


class _Draw:
    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def of(self, alphabet: str, count: int) -> str:
        """`count` characters of `alphabet`, with at least one digit and one letter when it has both."""
        while True:
            drawn = "".join(self._random.choice(alphabet) for _ in range(count))
            digits = set(alphabet) & set(string.digits)
            letters = set(alphabet) & set(string.ascii_letters)
            if (not digits or set(drawn) & digits) and (not letters or set(drawn) & letters):
                return drawn

    def password(self) -> str:
        return self.of(ALNUM, 18)


def _b64url(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def _pem(draw: _Draw, label: str) -> tuple[str, str]:
    body = "\n".join(draw.of(B64, 64) for _ in range(4))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----", body.splitlines()[1]


def secret_shapes(seed: int = 24) -> tuple[SecretShape, ...]:
    """The corpus: every shape issue 24 lists and more, each with a fresh random value."""
    d = _Draw(seed)
    pw = [d.password() for _ in range(16)]
    rsa, rsa_part = _pem(d, "RSA PRIVATE KEY")
    ssh, ssh_part = _pem(d, "OPENSSH PRIVATE KEY")
    gcp_key, gcp_part = _pem(d, "PRIVATE KEY")
    jwt = ".".join(
        (_b64url({"alg": "HS256", "typ": "JWT"}), _b64url({"sub": d.of(ALNUM, 12)}), d.of(URLSAFE, 43))
    )
    service_account = json.dumps(
        {
            "type": "service_account",
            "project_id": "demo-project",
            "private_key_id": d.of(LOWER_HEX, 40),
            "private_key": gcp_key + "\n",
            "client_email": "builder@demo-project.iam.gserviceaccount.com",
        }
    )
    azure = d.of(B64, 86) + "=="
    shapes = [
        ("anthropic", "ANTHROPIC_API_KEY is {s}", "sk-ant-api03-" + d.of(URLSAFE, 93) + "AA"),
        ("openai", "use the key {s} for the eval", "sk-proj-" + d.of(URLSAFE, 48)),
        ("aws-access-key", "aws_access_key_id = {s}", "AKIA" + d.of(UPPER_ALNUM, 16)),
        ("aws-secret-key", "aws_secret_access_key = {s}", d.of(B64, 40)),
        (
            "github-classic",
            "git remote set-url origin https://x-access-token:{s}@github.com/o/r",
            "ghp_" + d.of(ALNUM, 36),
        ),
        ("github-fine-grained", "GH_TOKEN={s}", "github_pat_" + d.of(ALNUM, 22) + "_" + d.of(ALNUM, 59)),
        ("gitlab", "gitlab token: {s}", "glpat-" + d.of(URLSAFE, 20)),
        (
            "slack-bot",
            "SLACK_BOT={s}",
            f"xoxb-{d.of(string.digits, 12)}-{d.of(string.digits, 13)}-{d.of(ALNUM, 24)}",
        ),
        (
            "slack-webhook",
            "curl -X POST {s} -d @msg.json",
            f"https://hooks.slack.com/services/T{d.of(UPPER_ALNUM, 8)}/B{d.of(UPPER_ALNUM, 8)}/{d.of(ALNUM, 24)}",
        ),
        ("stripe", "stripe.api_key = {s}", "sk_live_" + d.of(ALNUM, 24)),
        ("stripe-webhook", "STRIPE_WEBHOOK={s}", "whsec_" + d.of(ALNUM, 32)),
        ("google-api", "maps key {s}", "AIza" + d.of(URLSAFE, 35)),
        ("huggingface", "huggingface-cli login --token {s}", "hf_" + d.of(ALNUM, 34)),
        ("npm", "npm token is {s}", "npm_" + d.of(ALNUM, 36)),
        (
            "npmrc",
            "//registry.npmjs.org/:_authToken={s}",
            d.of(LOWER_HEX, 8)
            + "-"
            + d.of(LOWER_HEX, 4)
            + "-4"
            + d.of(LOWER_HEX, 3)
            + "-a"
            + d.of(LOWER_HEX, 3)
            + "-"
            + d.of(LOWER_HEX, 12),
        ),
        ("pypi", "twine upload -p {s}", "pypi-AgEIcHlwaS5vcmc" + d.of(URLSAFE, 60)),
        ("twilio", "TWILIO api key {s}", "SK" + d.of(LOWER_HEX, 32)),
        ("sendgrid", "sendgrid: {s}", f"SG.{d.of(URLSAFE, 22)}.{d.of(URLSAFE, 43)}"),
        ("mailchimp", "mailchimp key {s}", d.of(LOWER_HEX, 32) + "-us14"),
        ("square-access", "square access token {s}", "sq0atp-" + d.of(URLSAFE, 22)),
        ("square-secret", "square app secret {s}", "sq0csp-" + d.of(URLSAFE, 43)),
        ("discord", "discord bot {s}", f"M{d.of(URLSAFE, 23)}.{d.of(URLSAFE, 6)}.{d.of(URLSAFE, 27)}"),
        ("jwt", "session cookie {s}", jwt),
        ("pem-rsa", "id_rsa:\n{s}", rsa),
        ("pem-openssh", "cat ~/.ssh/id_ed25519\n{s}", ssh),
        ("gcp-service-account", "{s}", service_account),
        (
            "azure-storage",
            "DefaultEndpointsProtocol=https;AccountName=demo;AccountKey={s};EndpointSuffix=core.windows.net",
            azure,
        ),
        (
            "azure-sas",
            "https://demo.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig={s}",
            d.of(ALNUM, 43) + "%3D",
        ),
        ("bearer-header", 'curl -H "Authorization: Bearer {s}" https://api.internal', d.of(URLSAFE, 40)),
        ("basic-header", "Authorization: Basic {s}", base64.b64encode(f"ci:{pw[0]}".encode()).decode()),
        ("database-password", "DATABASE_PASSWORD={s}", pw[1]),
        ("service-api-key", "MY_SERVICE_API_KEY={s}", pw[2]),
        (
            "django-secret-key",
            "SECRET_KEY = '{s}'",
            "django-insecure-" + d.of(string.ascii_lowercase + string.digits + "!@#%^&*(-_=+)", 50),
        ),
        ("dotenv", "$ cat .env\nNODE_ENV=production\nSESSION_SECRET={s}\nPORT=3000", pw[3]),
        ("json-password", '{{"user": "admin", "password": "{s}"}}', pw[4]),
        ("postgres-url", "DATABASE_URL=postgresql://app:{s}@db.internal:5432/app", pw[5]),
        ("mysql-url", "mysql://root:{s}@localhost:3306/shop", pw[6]),
        ("mongodb-url", "mongodb+srv://admin:{s}@cluster0.abcde.mongodb.net/prod", pw[7]),
        ("redis-url", "REDIS_URL=redis://:{s}@cache:6379/0", pw[8]),
        ("basic-auth-url", "git clone https://deploy:{s}@git.example.com/repo.git", pw[9]),
        ("jdbc-password", "jdbc:postgresql://db/app?user=app&password={s}", pw[10]),
        ("ado-connection-string", "Server=tcp:db,1433;User ID=sa;Password={s};Encrypt=true", pw[11]),
        ("glued-name", "PGPASSWORD={s} psql -h db -U app", pw[12]),
        ("curl-user", "curl -u admin:{s} https://ci.internal/api/json", pw[13]),
        ("cli-password-flag", "docker login registry.internal --username ci --password {s}", pw[14]),
        ("cli-token-flag", "gh-release upload --token {s} dist/*.whl", pw[15]),
    ]
    return tuple(_shape(name, line, secret, gcp_part, rsa_part, ssh_part) for name, line, secret in shapes)


def _shape(name: str, line: str, secret: str, gcp: str, rsa: str, ssh: str) -> SecretShape:
    # A key file is caught as a whole; its distinctive part is a line of its body.
    distinctive = {"gcp-service-account": gcp, "pem-rsa": rsa, "pem-openssh": ssh}.get(name, secret)
    return SecretShape(name, line.format(s=secret), distinctive)
