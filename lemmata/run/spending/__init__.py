"""A run's spending: what its calls cost, what each stage will use, the budget, and the check before each job."""
