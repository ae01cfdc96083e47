#[cfg(test)]
mod tests {
    #[test]
    fn passes() {}
    #[test]
    fn fails() { println!("printed by fails"); assert_eq!(1, 2); }
    #[test]
    #[ignore]
    fn ignored() {}
}
