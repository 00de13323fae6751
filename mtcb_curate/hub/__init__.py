"""Publishing to the Hugging Face Hub: Hub-layout tables, the dataset card, the plan and the client."""
