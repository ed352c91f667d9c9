use super::*;

/// The language whose safe phrase `label` begins with.
fn safe(label: &str) -> Option<&'static str> {
    leading(Category::Safe, label, 6).map(|e| e.lang.as_str())
}

fn commit(label: &str) -> Option<&'static str> {
    find(Category::Commit, label).map(|e| e.lang.as_str())
}

fn secret(label: &str) -> Option<&'static str> {
    find(Category::SecretField, label).map(|e| e.lang.as_str())
}

#[test]
fn the_data_file_parses_and_covers_many_scripts() {
    let file: WordsFile = serde_json::from_str(WORDS_JSON).unwrap();
    assert_eq!(file.languages.len(), 30);
    for (lang, words) in &file.languages {
        assert!(!words.commit.is_empty(), "{lang}");
        assert!(!words.secret_field.is_empty(), "{lang}");
        assert!(words.safe.len() >= 10 && words.filter.len() >= 5, "{lang}");
        assert!(!words.name.is_empty(), "{lang}");
        // No safe phrase is also a commit: the commit list is read first,
        // and a safe entry that commits would be dead data.
        for w in &words.safe {
            assert!(entry(lang, w).is_some(), "{lang}: {w:?} folds to nothing");
            assert!(
                find(Category::Commit, w).is_none(),
                "{lang}: safe {w:?} commits"
            );
        }
        for w in words.commit.iter().chain(&words.secret_field) {
            assert!(entry(lang, w).is_some(), "{lang}: {w:?} folds to nothing");
        }
    }
    let about: serde_json::Value = serde_json::from_str(WORDS_JSON).unwrap();
    assert!(about["source"].as_str().is_some_and(|s| s.len() > 50));
}

#[test]
fn folding_splits_and_normalizes() {
    assert_eq!(fold_str("Place-Order now!"), "place order now");
    assert_eq!(fold_str("BuyNow"), "buy now");
    assert_eq!(fold_str("Bu\u{200b}y"), "buy");
    assert_eq!(fold_str("\u{ff22}\u{ff35}\u{ff39}"), "buy");
    assert_eq!(fold_str("\u{1d401}\u{1d42e}\u{1d432}"), "buy");
    assert_eq!(fold_str("\u{24b7}\u{24e4}\u{24e8}"), "buy");
    assert_eq!(fold_str("\u{412}u\u{443}"), "buy");
    assert_eq!(fold_str("pass: x=1"), "pass : x = 1");
    // Diacritics go, precomposed or combining; so do bidi controls.
    assert_eq!(fold_str("e\u{301}te\u{301}"), "ete");
    assert_eq!(fold_str("Suppr\u{ed}mer"), fold_str("supprimer"));
    assert_eq!(fold_str("\u{202e}eteled\u{202c}"), "eteled");
    assert_eq!(fold_str("De\u{0336}le\u{0301}te"), fold_str("delete"));
    // Look-alikes from other scripts have the Latin skeleton (TS #39),
    // capitals included.
    assert_eq!(fold_str("D\u{435}l\u{435}t\u{435}"), fold_str("delete"));
    let greek = fold::capitals_as_latin("\u{392}\u{3a5}\u{3a5}").unwrap();
    assert_eq!(fold_str(&greek), "byy");
    assert_eq!(
        fold_str("\u{41a}\u{423}\u{41f}\u{418}\u{422}\u{42c}"),
        fold_str("купить")
    );
    assert_eq!(fold_str("Stra\u{df}e"), "strasse");
    // Digits of any script are ASCII digits.
    assert_eq!(fold_str("\u{661}\u{662}\u{663} \u{967}\u{968}"), "123 12");
    // Devanagari vowel signs stay inside their word.
    assert_eq!(fold("अभी खरीदें").len(), 2);
}

/// One test per language: a commit button and a secret field as pages
/// label them, and an ordinary label that must not match.
#[test]
fn en() {
    assert_eq!(commit("Buy it now"), Some("en"));
    assert!(commit("Authorize app").is_some());
    assert!(commit("Grant access").is_some());
    assert!(secret("Recovery phrase").is_some());
    assert!(secret("Enter the 6-digit code we texted you").is_some());
    assert!(secret("MM / YY").is_some());
    assert!(find_in_identifier(Category::SecretField, "card_no").is_some());
    assert!(find_in_identifier(Category::SecretField, "pass").is_some());
    assert!(commit("Buyer's guide").is_none());
    assert!(secret("Search products").is_none());
}

#[test]
fn de() {
    assert!(commit("Jetzt kaufen").is_some());
    assert!(commit("Zahlungspflichtig bestellen").is_some());
    assert!(secret("Kartennummer").is_some());
    assert!(secret("Ihr Kontopasswort").is_some());
    assert!(commit("Mehr anzeigen").is_none());
}

#[test]
fn es() {
    assert!(commit("Comprar ahora").is_some());
    assert!(commit("Eliminar cuenta").is_some());
    assert!(secret("Número de tarjeta").is_some());
    assert!(secret("Contraseña").is_some());
    assert!(commit("Ver más resultados").is_none());
}

#[test]
fn fr() {
    assert!(commit("Passer la commande").is_some());
    assert!(commit("Supprimer").is_some());
    assert!(secret("Mot de passe").is_some());
    assert!(secret("Numéro de carte").is_some());
    assert!(commit("Page suivante").is_none());
}

#[test]
fn it() {
    assert!(commit("Acquista ora").is_some());
    assert!(secret("Codice di verifica").is_some());
    assert!(commit("Leggi di più").is_none());
}

#[test]
fn pt() {
    assert!(commit("Finalizar compra").is_some());
    assert!(secret("Número do cartão").is_some());
    assert!(secret("Senha").is_some());
    assert!(commit("Próxima página").is_none());
}

#[test]
fn nl_pl_tr() {
    assert!(commit("Nu kopen").is_some());
    assert!(secret("Wachtwoord").is_some());
    assert!(commit("Zamów teraz").is_some());
    assert!(secret("Hasło").is_some());
    assert!(commit("Satın al").is_some());
    assert!(secret("Şifre").is_some());
}

#[test]
fn ru() {
    assert!(commit("Оплатить").is_some());
    assert!(commit("Удалить аккаунт").is_some());
    assert!(secret("Код подтверждения").is_some());
    assert!(secret("Номер карты").is_some());
    assert!(commit("Читать далее").is_none());
}

#[test]
fn uk() {
    assert!(commit("Оплатити замовлення").is_some());
    assert!(secret("Номер картки").is_some());
}

#[test]
fn ar() {
    assert!(commit("إتمام الطلب").is_some());
    assert!(commit("حذف").is_some());
    assert!(secret("كلمة المرور").is_some());
    assert!(commit("المزيد من المقالات").is_none());
}

#[test]
fn hi() {
    assert!(commit("अभी खरीदें").is_some());
    assert!(secret("पासवर्ड").is_some());
}

#[test]
fn zh() {
    assert!(commit("立即购买").is_some());
    assert!(commit("提交订单").is_some());
    assert!(secret("请输入验证码").is_some());
    assert!(secret("银行卡号").is_some());
    assert!(commit("下一页").is_none());
}

#[test]
fn ja() {
    assert!(commit("削除する").is_some());
    assert!(commit("注文を確定する").is_some());
    assert!(secret("パスワード").is_some());
    assert!(secret("カード番号").is_some());
    assert!(commit("次のページ").is_none());
}

#[test]
fn ko() {
    assert!(commit("결제하기").is_some());
    assert!(commit("바로 구매").is_some());
    assert!(secret("비밀번호").is_some());
    assert!(secret("인증번호 입력").is_some());
    assert!(commit("다음 페이지").is_none());
}

#[test]
fn stylized_and_padded_labels_are_read_whole() {
    assert!(commit("\u{1d401}\u{1d42e}\u{1d432} now").is_some());
    assert!(commit("B U Y").is_some());
    let padded = format!("{}Delete account", "\u{a0}".repeat(300));
    assert!(commit(&padded).is_some());
    let long = format!("{} Delete", "word ".repeat(500));
    assert!(commit(&long).is_some());
}

#[test]
fn disclosures_find_the_value() {
    let cases: &[(&str, &str)] = &[
        ("my password is hunter2", "hunter2"),
        ("Password: correct-horse", "correct-horse"),
        ("pw=Tr0ub4dor", "Tr0ub4dor"),
        ("mein Passwort ist Sommer2024!", "Sommer2024!"),
        ("mi contraseña es gato1234", "gato1234"),
        ("мой пароль qwerty123", "qwerty123"),
        ("我的密码是abc12345", "abc12345"),
        ("비밀번호는 zx81spec", "zx81spec"),
        ("PIN 4711", "4711"),
    ];
    for (text, value) in cases {
        let found: Vec<&str> = disclosures(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(found, vec![*value], "{text}");
    }
    for benign in [
        "password manager reviews",
        "why my password is incorrect",
        "reset password help",
        "pin 2 tabs in chrome",
    ] {
        assert!(disclosures(benign).is_empty(), "{benign}");
    }
}

/// One test per language added for the 30 most used languages of the web:
/// a commit, a secret field, a safe label, and an ordinary label that is
/// neither.
fn language(commits: &[&str], secrets: &[&str], safes: &[&str], neither: &[&str]) {
    for c in commits {
        assert!(commit(c).is_some(), "commit {c:?}");
    }
    for f in secrets {
        assert!(secret(f).is_some(), "secret field {f:?}");
    }
    for l in safes {
        assert!(safe(l).is_some() && commit(l).is_none(), "safe {l:?}");
    }
    for n in neither {
        assert!(commit(n).is_none() && safe(n).is_none(), "neither {n:?}");
    }
}

#[test]
fn fa() {
    language(
        &["خرید", "پرداخت کنید", "حذف حساب"],
        &["رمز عبور", "شماره کارت"],
        &["نمایش بیشتر", "بعدی"],
        &["درباره ما"],
    );
}

#[test]
fn vi() {
    language(
        &["Mua ngay", "Thanh toán", "Xóa tài khoản", "Xoa tai khoan"],
        &["Mật khẩu", "Số thẻ"],
        &["Xem thêm", "Trang sau"],
        &["Giới thiệu"],
    );
}

#[test]
fn id() {
    language(
        &["Beli sekarang", "Bayar", "Hapus akun"],
        &["Kata sandi", "Nomor kartu"],
        &["Lihat lebih banyak", "Berikutnya"],
        &["Tentang kami"],
    );
}

#[test]
fn cs() {
    language(
        &["Koupit", "Zaplatit", "Smazat účet"],
        &["Heslo", "Číslo karty"],
        &["Zobrazit více", "Další"],
        &["O nás"],
    );
}

#[test]
fn hu() {
    language(
        &["Vásárlás", "Fizetés", "Törlés"],
        &["Jelszó", "Kártyaszám"],
        &["Továbbiak", "Következő"],
        &["Rólunk"],
    );
}

#[test]
fn sv() {
    language(
        &["Köp nu", "Betala", "Radera konto"],
        &["Lösenord", "Kortnummer"],
        &["Visa mer", "Nästa"],
        &["Om oss"],
    );
}

#[test]
fn ro() {
    language(
        &["Cumpără acum", "Plătește", "Șterge contul"],
        &["Parolă", "Număr card"],
        &["Vezi mai mult", "Următorul"],
        &["Despre noi"],
    );
}

#[test]
fn el() {
    language(
        &["Αγορά", "Πληρωμή", "ΔΙΑΓΡΑΦΗ"],
        &["Κωδικός πρόσβασης", "Αριθμός κάρτας"],
        &["Περισσότερα", "Επόμενη"],
        &["Σχετικά με εμάς"],
    );
}

#[test]
fn da() {
    language(
        &["Køb nu", "Betal", "Slet konto"],
        &["Adgangskode", "Kortnummer"],
        &["Vis mere", "Næste"],
        &["Om os"],
    );
}

#[test]
fn fi() {
    language(
        &["Osta nyt", "Maksa", "Poista tili"],
        &["Salasana", "Kortin numero"],
        &["Näytä lisää", "Seuraava"],
        &["Tietoa meistä"],
    );
}

#[test]
fn th() {
    language(
        &["ซื้อเลย", "ชำระเงิน", "ลบบัญชี"],
        &["รหัสผ่าน", "หมายเลขบัตร"],
        &["ดูเพิ่มเติม", "ถัดไป"],
        &["เกี่ยวกับเรา"],
    );
}

#[test]
fn he() {
    language(
        &["קנה עכשיו", "לתשלום", "מחק חשבון"],
        &["סיסמה", "מספר כרטיס"],
        &["הצג עוד", "הבא"],
        &["אודות"],
    );
}

#[test]
fn sk() {
    language(
        &["Kúpiť", "Zaplatiť", "Zmazať účet"],
        &["Heslo", "Číslo karty"],
        &["Zobraziť viac", "Ďalšia"],
        &["O nás"],
    );
}

#[test]
fn bg() {
    language(
        &["Купи сега", "Плати", "Изтрий профила"],
        &["Парола", "Номер на карта"],
        &["Покажи още", "Следваща"],
        &["За нас"],
    );
}

#[test]
fn safe_labels_of_the_first_sixteen_languages() {
    for l in [
        "Show more reviews",
        "Mehr anzeigen",
        "Ver más",
        "Voir plus",
        "Mostra di più",
        "Ver mais",
        "Meer tonen",
        "Pokaż więcej",
        "Daha fazla göster",
        "Показать ещё",
        "Показати більше",
        "عرض المزيد",
        "और देखें",
        "查看更多",
        "もっと見る",
        "더보기",
        "Add to cart",
    ] {
        assert!(safe(l).is_some(), "{l}");
    }
    // A sentence is not a safe label, however it starts.
    assert!(safe("Show me how to move all my savings to another bank today").is_none());
}

#[test]
fn languages_and_scripts_laika_cannot_read() {
    assert!(covers_language("pt-BR") && covers_language("zh-Hant") && covers_language("EL"));
    assert!(!covers_language("am") && !covers_language("sw-KE"));
    assert_eq!(language_name("am-ET"), "Amharic");
    assert_eq!(language_name("de"), "German");
    assert_eq!(unread_script("ክፈል"), Some("Ethiopic"));
    assert_eq!(unread_script("বাংলা"), Some("Bengali"));
    assert_eq!(unread_script("Pay 💳"), None);
    assert_eq!(unread_script("Оплатить 支付 ชำระเงิน"), None);
}

#[test]
fn disclosed_values_are_found_where_folding_changed_the_length() {
    // `m` folds to `rn`, `ﬁ` to `fi`, a zero-width space to nothing:
    // the value is still cut from the original text at the right place.
    for text in [
        "mein Passwort ist m\u{200b}ammut42",
        "my password is ﬁmm3ter",
        "비밀번호는mm123abc",
    ] {
        let found: Vec<&str> = disclosures(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(found.len(), 1, "{text}: {found:?}");
        assert!(
            found[0].ends_with("42") || found[0].ends_with("ter") || found[0].ends_with("abc"),
            "{text}: {found:?}"
        );
        assert!(
            !found[0].contains("ist") && !found[0].contains("is ") && !found[0].contains('는'),
            "{text}: {found:?}"
        );
    }
}
