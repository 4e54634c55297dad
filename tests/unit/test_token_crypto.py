import base64

import pytest
from cryptography.fernet import Fernet
from pydantic import SecretStr

from smuves_sync.errors import ConfigurationError
from smuves_sync.token_crypto import TokenCipher, new_secret_key


def _keys(*keys: str) -> SecretStr:
    return SecretStr(",".join(keys))


def test_round_trip_and_ciphertext_hides_the_token() -> None:
    key = new_secret_key()
    cipher = TokenCipher(SecretStr(key))
    encrypted = cipher.encrypt(SecretStr("pat-na1-secret-token"))
    assert b"pat-na1-secret-token" not in encrypted
    assert cipher.decrypt(encrypted).get_secret_value() == "pat-na1-secret-token"
    assert key not in repr(cipher)


def test_wrong_key_is_a_clear_configuration_error() -> None:
    encrypted = TokenCipher(SecretStr(new_secret_key())).encrypt(SecretStr("pat-secret"))
    with pytest.raises(ConfigurationError, match="SMUVES_SECRET_KEY differs") as info:
        TokenCipher(SecretStr(new_secret_key())).decrypt(encrypted)
    assert "pat-secret" not in str(info.value)


@pytest.mark.parametrize("key", [None, SecretStr(""), SecretStr("  ")])
def test_missing_key_is_refused(key: SecretStr | None) -> None:
    with pytest.raises(ConfigurationError, match="SMUVES_SECRET_KEY is not set") as info:
        TokenCipher(key)
    assert "`smuves secret-key`" in str(info.value)


def test_a_new_key_is_fernets_format() -> None:
    key = new_secret_key()
    assert len(key) == 44 and len(base64.urlsafe_b64decode(key)) == 32
    assert new_secret_key() != key
    # What the cipher encrypts, Fernet itself reads with the same key: no derivation between.
    encrypted = TokenCipher(SecretStr(key)).encrypt(SecretStr("pat"))
    assert Fernet(key.encode()).decrypt(encrypted) == b"pat"


_RANDOM = base64.urlsafe_b64encode(bytes(range(100, 132))).decode()


@pytest.mark.parametrize(
    "key",
    [
        "operator passphrase",
        "correct horse battery staple correct horse!",
        # Right alphabet, wrong length: 16 and 64 bytes.
        base64.urlsafe_b64encode(bytes(16)).decode(),
        base64.urlsafe_b64encode(bytes(64)).decode(),
        # 32 bytes, but standard base64 (+ and /) or without its padding.
        base64.b64encode(b"\xfb" * 32).decode(),
        _RANDOM.rstrip("="),
        # 44 characters of which some are outside the alphabet.
        "!" + _RANDOM[1:],
    ],
    ids=[
        "passphrase",
        "44-char-passphrase",
        "16-bytes",
        "64-bytes",
        "std-b64",
        "no-pad",
        "bad-char",
    ],
)
def test_anything_but_a_random_32_byte_key_is_refused_in_one_line(key: str) -> None:
    with pytest.raises(ConfigurationError, match="not a valid key") as info:
        TokenCipher(SecretStr(key))
    message = str(info.value)
    assert "`smuves secret-key`" in message and "\n" not in message
    assert key not in message


def test_one_bad_key_among_several_is_named_by_position() -> None:
    with pytest.raises(ConfigurationError, match=r"key 2 of 3"):
        TokenCipher(_keys(new_secret_key(), "old passphrase", new_secret_key()))


def test_several_keys_encrypt_under_the_newest_and_decrypt_with_any() -> None:
    old, older, newest = new_secret_key(), new_secret_key(), new_secret_key()
    under_old = TokenCipher(SecretStr(old)).encrypt(SecretStr("pat-old"))
    under_older = TokenCipher(SecretStr(older)).encrypt(SecretStr("pat-older"))

    cipher = TokenCipher(_keys(newest, old, older))
    assert cipher.key_count == 3
    assert cipher.decrypt(under_old).get_secret_value() == "pat-old"
    assert cipher.decrypt(under_older).get_secret_value() == "pat-older"
    fresh = cipher.encrypt(SecretStr("pat-new"))
    assert TokenCipher(SecretStr(newest)).decrypt(fresh).get_secret_value() == "pat-new"
    # Spaces around the commas (a hand-edited list) are not part of the keys.
    assert TokenCipher(SecretStr(f" {newest} , {old} ")).decrypt(under_old).get_secret_value()


def test_rotate_moves_a_token_under_the_newest_key() -> None:
    old, newest = new_secret_key(), new_secret_key()
    under_old = TokenCipher(SecretStr(old)).encrypt(SecretStr("pat-rotated"))
    cipher = TokenCipher(_keys(newest, old))

    assert not cipher.is_current(under_old)
    rotated = cipher.rotate(under_old)
    assert cipher.is_current(rotated)
    # Once rotated, the old key may go.
    alone = TokenCipher(SecretStr(newest))
    assert alone.decrypt(rotated).get_secret_value() == "pat-rotated"
    assert alone.is_current(rotated)


def test_rotate_of_a_token_no_key_reads_is_a_configuration_error() -> None:
    foreign = TokenCipher(SecretStr(new_secret_key())).encrypt(SecretStr("pat-x"))
    cipher = TokenCipher(SecretStr(new_secret_key()))
    assert not cipher.is_current(foreign)
    with pytest.raises(ConfigurationError, match="cannot be decrypted"):
        cipher.rotate(foreign)
