//! The official SuperBPE training recipe (PythonNut/superbpe at bbd0976: scripts/train_tokenizer.sh,
//! scripts/extend_tokenizer.sh, utils.train_or_extend_tokenizer) on the fork's Rust crate:
//!
//!   superbpe-train train OUT_DIR VOCAB_SIZE TRANSITION FILE...
//!     stage 1: OUT_DIR/stage1, BpeTrainer(vocab_size) with Split(R1, isolated) + ByteLevel(False, True, False),
//!              cwd holding no merges.txt (do_train_original); model.save(".") and tokenizer.save("tokenizer.json")
//!     stage 2: OUT_DIR/stage2 holding `head -n TRANSITION+1 stage1/merges.txt` (the #version header and
//!              TRANSITION merges), the same trainer with Split(R2, isolated) + ByteLevel, cwd = OUT_DIR/stage2
//!              (do_train_extend); model.save(".") and tokenizer.save("tokenizer.json")
//!   superbpe-train encode TOKENIZER_JSON TEXT_FILE      prints the ids of the whole file as one JSON list
use std::path::{Path, PathBuf};
use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::bpe::{BpeTrainerBuilder, BPE};
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::processors::PostProcessorWrapper;
use tokenizers::{Model, SplitDelimiterBehavior, Tokenizer, TokenizerImpl};

const R1: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const R2: &str = r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)";

type Tok = TokenizerImpl<BPE, NormalizerWrapper, PreTokenizerWrapper, PostProcessorWrapper, DecoderWrapper>;

/// utils.train_or_extend_tokenizer: Tokenizer(BPE()), BpeTrainer(show_progress, vocab_size), the Split + ByteLevel
/// sequence, tokenizer.train(files); then train_tokenizer.py's model.save(".") and tokenizer.save("tokenizer.json").
fn train_in(dir: &Path, files: &[String], vocab_size: usize, regex: &str) {
    std::env::set_current_dir(dir).unwrap();
    let mut tok: Tok = TokenizerImpl::new(BPE::default());
    let split = Split::new(SplitPattern::Regex(regex.to_string()), SplitDelimiterBehavior::Isolated, false).unwrap();
    let seq = Sequence::new(vec![split.into(), ByteLevel::new(false, true, false).into()]);
    tok.with_pre_tokenizer(Some(PreTokenizerWrapper::Sequence(seq)));
    let mut trainer = BpeTrainerBuilder::new().show_progress(false).vocab_size(vocab_size).build();
    tok.train_from_files(&mut trainer, files.to_vec()).unwrap();
    tok.get_model().save(Path::new("."), None).unwrap();
    tok.save("tokenizer.json", true).unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(|s| s.as_str()) {
        Some("train") => {
            let out = PathBuf::from(&args[2]);
            let vocab_size: usize = args[3].parse().unwrap();
            let transition: usize = args[4].parse().unwrap();
            let files: Vec<String> = args[5..]
                .iter()
                .map(|f| std::fs::canonicalize(f).unwrap().to_string_lossy().into_owned())
                .collect();
            let (s1, s2) = (out.join("stage1"), out.join("stage2"));
            std::fs::create_dir_all(&s1).unwrap();
            std::fs::create_dir_all(&s2).unwrap();
            let (s1, s2) = (std::fs::canonicalize(s1).unwrap(), std::fs::canonicalize(s2).unwrap());
            assert!(!s1.join("merges.txt").exists(), "stage 1 must start without merges.txt");
            train_in(&s1, &files, vocab_size, R1);
            let merges = std::fs::read_to_string(s1.join("merges.txt")).unwrap();
            let head: Vec<&str> = merges.lines().take(transition + 1).collect();
            std::fs::write(s2.join("merges.txt"), head.join("\n") + "\n").unwrap();
            train_in(&s2, &files, vocab_size, R2);
        }
        Some("encode") => {
            let tok = Tokenizer::from_file(&args[2]).unwrap();
            let text = std::fs::read_to_string(&args[3]).unwrap();
            let enc = tok.encode(text.as_str(), true).unwrap();
            println!("{}", serde_json::to_string(enc.get_ids()).unwrap());
        }
        _ => {
            eprintln!("usage: superbpe-train train OUT_DIR VOCAB_SIZE TRANSITION FILE... | encode TOKENIZER_JSON TEXT");
            std::process::exit(2);
        }
    }
}
