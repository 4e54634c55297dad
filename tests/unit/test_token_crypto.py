import pytest
from pydantic import SecretStr

from smuves_sync.errors import ConfigurationError
from smuves_sync.token_crypto import TokenCipher


def test_round_trip_and_ciphertext_hides_the_token() -> None:
    cipher = TokenCipher(SecretStr("operator passphrase"))
    encrypted = cipher.encrypt(SecretStr("pat-na1-secret-token"))
    assert b"pat-na1-secret-token" not in encrypted
    assert cipher.decrypt(encrypted).get_secret_value() == "pat-na1-secret-token"
    assert "passphrase" not in repr(cipher)


def test_wrong_key_is_a_clear_configuration_error() -> None:
    encrypted = TokenCipher(SecretStr("key one")).encrypt(SecretStr("pat-secret"))
    with pytest.raises(ConfigurationError, match="SMUVES_SECRET_KEY differs") as info:
        TokenCipher(SecretStr("key two")).decrypt(encrypted)
    assert "pat-secret" not in str(info.value)


@pytest.mark.parametrize("key", [None, SecretStr("")])
def test_missing_key_is_refused(key: SecretStr | None) -> None:
    with pytest.raises(ConfigurationError, match="SMUVES_SECRET_KEY is not set"):
        TokenCipher(key)
